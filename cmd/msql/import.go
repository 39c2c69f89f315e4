package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/store"
)

func init() {
	subcommands["import"] = subcommand{"import MSCONS, CSV or Parquet deliveries through the store's write paths", runImport}
}

const importUsage = `msql import [--table T] [--format mscons|csv|parquet] [--set column=value …]
            [--map source=column …] [--time-zone Z] [--malo-of FILE] [--dry-run] FILE|DIR|- …

Imports deliveries: MSCONS interchanges, and CSV or Parquet files in the
table's layout (see docs/import.md). Each MSCONS message, and in a CSV or
Parquet file all rows of one malo_id, obis_code and version_scope, goes in
whole or not at all; a refused one is named with the file, message or row,
segment or column and the rule, and the others go in. History below what
PostgreSQL holds goes straight to Iceberg in one commit; late corrections go
to Iceberg, the rest to PostgreSQL. Importing the same files again changes
nothing (every row a duplicate). A directory imports every file below it;
- reads standard input. The format is told from the content unless --format.

Exit status: 0 when everything went in, 5 when some batches were refused,
2 for a bad command line, 1 when the import could not go on.

Examples:
  msql import deliveries/                              every MSCONS file in a folder
  msql import --set tenant=t1 history.parquet          a tenant for every row
  msql import --map Zeitpunkt=from --map Ende=to --map Menge=value \
              --set operator=9910125000002 export.csv  another system's column names
  msql import --time-zone Europe/Berlin local.csv      timestamps written without an offset (CSV, MSCONS)
  msql import --malo-of melo-malo.csv deliveries/      MSCONS naming MeLos: their MaLos from a file
  msql import --dry-run big.parquet                    check everything, write nothing
  cat 2026-03.edi | msql import -                      from a pipe`

// importRefused is an import that went on past refused batches.
type importRefused struct{ n int }

func (e *importRefused) Error() string {
	return fmt.Sprintf("%d batches refused (see above); fix them and import the files again: what went in comes back as duplicates", e.n)
}

// pairFlag is a repeatable key=value flag.
type pairFlag struct {
	name string
	m    map[string]string
}

func (p *pairFlag) String() string { return "" }
func (p *pairFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("--%s %q: write it as name=value", p.name, v)
	}
	if _, dup := p.m[k]; dup {
		return fmt.Errorf("--%s %s given twice", p.name, k)
	}
	p.m[k] = val
	return nil
}

// importFlags are the import options, shared by msql import and the shell's .import.
type importFlags struct {
	table, format, zone string
	maloOf              string
	dryRun              bool
	set, mapping        pairFlag
}

func (f *importFlags) register(fs *flag.FlagSet) {
	f.set = pairFlag{name: "set", m: map[string]string{}}
	f.mapping = pairFlag{name: "map", m: map[string]string{}}
	fs.StringVar(&f.table, "table", "", "the table to import into (default: the only one)")
	fs.StringVar(&f.format, "format", "", "mscons, csv or parquet (default: from each file's content)")
	fs.Var(&f.set, "set", "column=value for every row (repeatable), e.g. --set tenant=t1")
	fs.Var(&f.mapping, "map", "source=column: read the file's column source as column (repeatable)")
	fs.StringVar(&f.zone, "time-zone", "", "read timestamps without an offset (CSV and Parquet columns, MSCONS DTM format 203) as wall-clock time in this zone, e.g. Europe/Berlin")
	fs.StringVar(&f.maloOf, "malo-of", "", "CSV file with columns melo_id,malo_id: the MaLo of each MeLo an MSCONS message names in LOC+172")
	fs.BoolVar(&f.dryRun, "dry-run", false, "read and check everything, write nothing")
}

// options turns the flags into ingest.Options.
func (f *importFlags) options() (ingest.Options, error) {
	format, err := ingest.ParseFormat(f.format)
	if err != nil {
		return ingest.Options{}, withHint(fmt.Errorf("%w: %v", errUsage, err), "--format csv")
	}
	opt := ingest.Options{Table: f.table, Format: format, Set: f.set.m, Map: f.mapping.m, DryRun: f.dryRun}
	if f.zone != "" {
		loc, err := time.LoadLocation(f.zone)
		if err != nil {
			return ingest.Options{}, withHint(fmt.Errorf("%w: --time-zone %q is not a time zone", errUsage, f.zone), "--time-zone Europe/Berlin")
		}
		opt.TimeZone = loc
	}
	if f.maloOf != "" {
		if opt.MaloOf, err = loadMaloOf(f.maloOf); err != nil {
			return ingest.Options{}, withHint(fmt.Errorf("%w: %v", errUsage, err), "--malo-of melo-malo.csv with the header melo_id,malo_id")
		}
	}
	return opt, nil
}

func runImport(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var f importFlags
	fs := newFlagSet("msql import", importUsage, io)
	deploy.register(fs)
	f.register(fs)
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fs.Usage()
		return withHint(fmt.Errorf("%w: name the files to import", errUsage), "msql import deliveries/  (or - for standard input)")
	}
	opt, err := f.options()
	if err != nil {
		return err
	}
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	return importPaths(ctx, d.store, opt, paths, io)
}

// importPaths imports files (- is standard input), drawing progress on
// standard error, and prints the report.
func importPaths(ctx context.Context, st *store.Store, opt ingest.Options, paths []string, io stdio) error {
	bar := &progressBar{w: io.err, tty: io.tty}
	opt.Progress = bar.update
	var files []string
	total := ingest.Report{DryRun: opt.DryRun}
	run := func(rep ingest.Report, err error) error {
		add(&total, rep)
		return err
	}
	for _, p := range paths {
		if p != "-" {
			files = append(files, p)
			continue
		}
		if err := run(ingest.Files(ctx, st, opt, files...)); err != nil {
			return finishImport(total, bar, err, io)
		}
		files = nil
		if err := run(ingest.Read(ctx, st, opt, "stdin", io.in)); err != nil {
			return finishImport(total, bar, err, io)
		}
	}
	var err error
	if len(files) > 0 {
		err = run(ingest.Files(ctx, st, opt, files...))
	}
	return finishImport(total, bar, err, io)
}

func finishImport(rep ingest.Report, bar *progressBar, err error, io stdio) error {
	bar.done()
	if err != nil && rep.Files == 0 {
		// A bad command line or a first file that cannot be read: nothing
		// was read, so no report of nothing.
		if errors.Is(err, ingest.ErrOptions) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return err
	}
	fmt.Fprintln(io.out, rep.String())
	if err != nil {
		if errors.Is(err, ingest.ErrOptions) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return err
	}
	if !rep.OK() {
		return &importRefused{n: len(rep.Refused)}
	}
	return nil
}

// add sums two reports. The stamp of the first part that stamped rows is
// the one the summed report names (each part reads the store's clock at its
// own start: files before and after a - are two parts).
func add(t *ingest.Report, r ingest.Report) {
	if t.StampedAt.IsZero() || t.Stamped == 0 && r.Stamped > 0 {
		t.StampedAt, t.StampClock = r.StampedAt, r.StampClock
	}
	t.Stamped += r.Stamped
	t.Files += r.Files
	t.Batches += r.Batches
	t.Rows += r.Rows
	t.HotRows += r.HotRows
	t.ColdRows += r.ColdRows
	t.BulkRows += r.BulkRows
	t.BulkCommits += r.BulkCommits
	t.Inserted += r.Inserted
	t.Superseded += r.Superseded
	t.Shadowed += r.Shadowed
	t.Duplicate += r.Duplicate
	t.Refused = append(t.Refused, r.Refused...)
	t.Notes = append(t.Notes, r.Notes...)
	t.Elapsed += r.Elapsed
}

// progressBar draws ingest progress: one line redrawn in place on a
// terminal; otherwise a plain line per finished file, and at most one a
// second while a file is read.
type progressBar struct {
	w     io.Writer
	tty   bool
	files int
	last  time.Time
	drawn bool
}

func (b *progressBar) update(p ingest.Progress) {
	line := fmt.Sprintf("files %d/%d · batches %d · rows %d · %.0f rows/s", p.Files, p.FilesTotal, p.Batches, p.Rows, p.RowsPerSecond())
	if b.tty {
		fmt.Fprintf(b.w, "\r\x1b[K%s  %s", line, baseOf(p.File))
		b.drawn = true
		return
	}
	if p.Files != b.files || time.Since(b.last) >= time.Second {
		b.files, b.last = p.Files, time.Now()
		fmt.Fprintf(b.w, "%s: %s\n", p.File, line)
	}
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

func baseOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
