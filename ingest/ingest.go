package ingest

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
	"github.com/meterstore/meterstore/store"
)

// Format is a delivery's file format.
type Format string

// The formats. The zero Format means: tell from the content (Detect).
const (
	MSCONS  Format = "mscons"
	CSV     Format = "csv"
	Parquet Format = "parquet"
)

// ParseFormat accepts mscons, csv or parquet (any case); "" is the zero Format.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "", MSCONS, CSV, Parquet:
		return f, nil
	}
	return "", &FormatError{Format: s}
}

// FormatError is a format none of mscons, csv and parquet; it is an ErrOptions.
type FormatError struct{ Format string }

func (e *FormatError) Error() string {
	return fmt.Sprintf("--format %s: not a format msql import reads; use mscons, csv or parquet, or leave --format out to tell each file's format from its content", e.Format)
}

// Is makes a FormatError an ErrOptions without naming the category in its text.
func (e *FormatError) Is(target error) bool { return target == ErrOptions }

// ErrOptions: the options cannot work (an unknown table or column, a --set
// the file also holds, a mapping onto nothing). Nothing was imported.
var ErrOptions = errors.New("import options")

// Options tune an import. The zero value imports into the store's only table,
// telling each file's format from its content.
type Options struct {
	// Table is the table to import into; "" is the store's only table.
	Table string
	// Format of every file; zero tells each file's format from its content.
	Format Format
	// Set fills a column every row of a CSV or Parquet file lacks (a tenant,
	// an operator, a version), and a declared column of every MSCONS
	// delivery. A column the file holds as well is refused: say it once.
	// A row's own from, to and value are refused: one value for every row
	// is no reading.
	Set map[string]string
	// Map renames a CSV or Parquet file's column (key) to the table's
	// column (value), e.g. {"Zeitpunkt": "from"}.
	Map map[string]string
	// TimeZone reads timestamps written without an offset as wall-clock time
	// there (Europe/Berlin, say) — CSV and Parquet columns, and MSCONS DTMs in
	// format 203/204 (mscons.Options.TimeZone); nil refuses them, naming the
	// column or segment. A wall clock that zone skips or repeats (the DST
	// switches) is refused either way.
	TimeZone *time.Location
	// DryRun reads, parses and checks everything and writes nothing; the
	// report's tiers are where the rows would go.
	DryRun bool
	// DB is the unrestricted in-process DuckDB that reads CSV and Parquet
	// files; nil is the store engine's (engine.Engine.DB).
	DB *sql.DB
	// Progress, when set, is called after each batch and at the end of each file.
	Progress func(Progress)
	// Now is the clock: the bulk path never moves the watermark past now
	// minus the table's settlement lag, and rows without recorded_at get
	// the import's start. Nil is the store's clock (store.Store.Now).
	Now func() time.Time
	// MaloOf resolves a Messlokation an MSCONS message names in LOC+172 to
	// the Marktlokation its readings are stored on; nil refuses such a
	// message, naming the MeLo.
	MaloOf func(metering.MeloID) (metering.MaloID, error)
	// System names the source of CSV and Parquet rows without
	// source_detail: {"IMPORT":{"system":…}}. Empty is the file's base name.
	System string
}

// Progress is how far an import has come.
type Progress struct {
	File       string // the file being read
	Files      int    // files finished
	FilesTotal int    // files named (a directory's files counted once it is listed)
	Batches    int    // batches (MSCONS messages) read so far
	Rows       int    // rows of accepted batches so far, read or written
	Elapsed    time.Duration
}

// RowsPerSecond is the rows so far over the time elapsed.
func (p Progress) RowsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Rows) / p.Elapsed.Seconds()
}

// Refusal is one batch that did not go in, and why.
type Refusal struct {
	File string
	// Batch names the batch: "message <ref>" for MSCONS; for CSV and
	// Parquet its group, or "" when the whole file was refused.
	Batch string
	// Where points into the batch: "segment LOC+172 (segment 12)", "row 17,
	// column malo_id". Empty when the rule is about the batch as a whole.
	Where string
	Rows  int // rows the batch held (0 when it could not be read)
	Err   error
}

func (r Refusal) Error() string {
	var me *mscons.MessageError
	var se *mscons.SyntaxError
	if errors.As(r.Err, &me) || errors.As(r.Err, &se) {
		return r.File + ": " + r.Err.Error() // it names the message and segment itself
	}
	var b strings.Builder
	b.WriteString(r.File)
	for _, s := range []string{r.Batch, r.Where} {
		if s != "" {
			b.WriteString(": ")
			b.WriteString(s)
		}
	}
	b.WriteString(": ")
	b.WriteString(r.Err.Error())
	return b.String()
}

func (r Refusal) Unwrap() error { return r.Err }

// Report is what an import did.
type Report struct {
	DryRun  bool
	Files   int
	Batches int // batches (MSCONS messages) read, accepted or not
	// Rows are the rows of accepted batches: HotRows + ColdRows.
	Rows     int
	HotRows  int // to PostgreSQL
	ColdRows int // to Iceberg: late corrections and bulk history
	// BulkRows of the ColdRows went in through the bulk history path, in
	// BulkCommits Iceberg commits (each moving the watermark).
	BulkRows    int
	BulkCommits int
	// Stamped of the Rows carried no recorded_at: they were written with
	// StampedAt, the import's start as StampClock told it — store.StoreClock
	// for the store's clock (store.Config.Now), store.CallerClock for
	// Options.Now. The other rows carried their own (a CSV or Parquet
	// recorded_at column). One instant for the whole import, so every row it
	// stamped is known from the same moment on (View.AsKnownAt).
	Stamped    int
	StampedAt  time.Time
	StampClock store.Clock
	// What writing each row did (meterstore.Effect); zero on a dry run.
	Inserted, Superseded, Shadowed, Duplicate int
	Refused                                   []Refusal
	// Notes say what took another path than planned, and why.
	Notes   []string
	Elapsed time.Duration
}

// OK reports whether everything went in.
func (r Report) OK() bool { return len(r.Refused) == 0 }

// Changed reports whether the import changed what any query returns.
func (r Report) Changed() bool { return r.Inserted+r.Superseded+r.Shadowed > 0 }

func (r Report) String() string {
	var b strings.Builder
	verb := "imported"
	if r.DryRun {
		verb = "would import"
	}
	fmt.Fprintf(&b, "%s %d rows from %d files (%d of %d batches): %d hot, %d cold",
		verb, r.Rows, r.Files, r.Batches-len(r.Refused), r.Batches, r.HotRows, r.ColdRows)
	if r.BulkRows > 0 {
		fmt.Fprintf(&b, " (%d as history in %d commits)", r.BulkRows, r.BulkCommits)
	}
	if !r.DryRun {
		fmt.Fprintf(&b, "; %d inserted, %d superseded, %d shadowed, %d duplicate", r.Inserted, r.Superseded, r.Shadowed, r.Duplicate)
		if r.Rows > 0 && r.Duplicate == r.Rows {
			b.WriteString(" (all already stored: nothing changed)")
		}
	}
	if r.Rows > 0 {
		clock := "the store's clock"
		if r.StampClock == store.CallerClock {
			clock = "Options.Now"
		}
		fmt.Fprintf(&b, "\nrecorded_at: %d rows stamped %s by %s, %d carried their own",
			r.Stamped, r.StampedAt.UTC().Format(time.RFC3339Nano), clock, r.Rows-r.Stamped)
	}
	for _, n := range r.Notes {
		b.WriteString("\nnote: ")
		b.WriteString(n)
	}
	if len(r.Refused) > 0 {
		fmt.Fprintf(&b, "\nrefused %d batches:", len(r.Refused))
		for _, f := range r.Refused {
			b.WriteString("\n  ")
			b.WriteString(f.Error())
		}
	}
	return b.String()
}

// Files imports the named files and directories (every regular file below a
// directory, in name order, hidden ones skipped). A batch that breaks a rule
// is reported in Report.Refused and the import goes on; the error is for what
// stops the import itself — bad options, an unreadable path, a tier that
// cannot be reached — with the report of what went in before.
func Files(ctx context.Context, st *store.Store, opt Options, paths ...string) (Report, error) {
	im, err := newImporter(st, opt)
	if err != nil {
		return Report{}, err
	}
	var files []string
	for _, p := range paths {
		fs, err := listFiles(p)
		if err != nil {
			return im.rep, err
		}
		files = append(files, fs...)
	}
	im.prog.FilesTotal = len(files)
	for _, f := range files {
		if err := im.file(ctx, f); err != nil {
			return im.finish(), err
		}
	}
	err = im.flush(ctx, strings.Join(paths, ", "))
	return im.finish(), err
}

// Read imports one delivery from r, named name in refusals (a file name, a
// mail's attachment name). MSCONS is read as it streams; CSV and Parquet are
// spooled to a temporary file for DuckDB's readers.
func Read(ctx context.Context, st *store.Store, opt Options, name string, r io.Reader) (Report, error) {
	im, err := newImporter(st, opt)
	if err != nil {
		return Report{}, err
	}
	im.prog.FilesTotal = 1
	if err := im.reader(ctx, name, r); err != nil {
		return im.finish(), err
	}
	err = im.flush(ctx, name)
	return im.finish(), err
}

// listFiles expands a directory into its regular files, in name order.
func listFiles(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", p, err)
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != p && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", p, err)
	}
	slices.Sort(out)
	return out, nil
}

// importer is one import run.
type importer struct {
	st    *store.Store
	tbl   *store.Table
	cfg   meterstore.TableConfig
	opt   Options
	db    *sql.DB
	start time.Time
	// recordedAt is recorded_at of rows that carry none: the import's start.
	recordedAt time.Time
	// checkRecordedAt is what a row's own recorded_at is checked against
	// (stamping.clock and skew).
	checkRecordedAt stamping
	// mu guards rep and prog while groups are written concurrently.
	mu  sync.Mutex
	rep Report
	// pending are batches read and not yet written, queued rows in all.
	pending []batch
	queued  int
	prog    Progress
}

func newImporter(st *store.Store, opt Options) (*importer, error) {
	var tbl *store.Table
	if opt.Table != "" {
		t, ok := st.Table(opt.Table)
		if !ok {
			var names []string
			for _, t := range st.Tables() {
				names = append(names, t.Config().Name())
			}
			return nil, fmt.Errorf("%w: no table %q (tables: %s)", ErrOptions, opt.Table, strings.Join(names, ", "))
		}
		tbl = t
	} else {
		ts := st.Tables()
		if len(ts) != 1 {
			var names []string
			for _, t := range ts {
				names = append(names, t.Config().Name())
			}
			return nil, fmt.Errorf("%w: the store has %d tables (%s); name one with --table", ErrOptions, len(ts), strings.Join(names, ", "))
		}
		tbl = ts[0]
	}
	if _, err := ParseFormat(string(opt.Format)); err != nil {
		return nil, err
	}
	clock := store.CallerClock
	if opt.Now == nil {
		opt.Now, clock = st.Now, store.StoreClock
	}
	cfg := tbl.Config()
	for col := range opt.Set {
		if !settable(cfg, col) {
			return nil, fmt.Errorf("%w: --set %s: table %s has no such column (columns: %s)", ErrOptions, col, cfg.Name(), strings.Join(inputColumns(cfg), ", "))
		}
		if slices.Contains(ownColumns, col) {
			return nil, fmt.Errorf("%w: --set %s: each row has its own %s, which one value for every row cannot give; --set fills identity and attribute columns (a tenant, the operator, a version) — take %s from the file, renamed with --map if its name differs",
				ErrOptions, col, col, col)
		}
	}
	for src, col := range opt.Map {
		if !settable(cfg, col) {
			return nil, fmt.Errorf("%w: --map %s=%s: table %s has no column %q (columns: %s)", ErrOptions, src, col, cfg.Name(), col, strings.Join(inputColumns(cfg), ", "))
		}
	}
	db := opt.DB
	if db == nil {
		db = st.Engine().DB()
	}
	now := time.Now()
	stamp := opt.Now().UTC().Truncate(time.Microsecond)
	var check stamping
	if skew := st.RecordedAtSkew(); skew >= 0 {
		check = stamping{clock: st.Now().UTC(), skew: skew}
	}
	return &importer{st: st, tbl: tbl, cfg: cfg, opt: opt, db: db, start: now,
		recordedAt: stamp, checkRecordedAt: check, rep: Report{DryRun: opt.DryRun, StampedAt: stamp, StampClock: clock}}, nil
}

// stamping is what the rows of this import get and may carry as recorded_at.
func (im *importer) stamping() stamping {
	s := im.checkRecordedAt
	s.at = im.recordedAt
	return s
}

// finish stamps the elapsed time and reports the last progress.
func (im *importer) finish() Report {
	im.rep.Elapsed = time.Since(im.start)
	return im.rep
}

func (im *importer) progress(file string) {
	if im.opt.Progress == nil {
		return
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	im.prog.File = file
	im.prog.Batches = im.rep.Batches
	im.prog.Rows = im.rep.Rows + im.queued
	im.prog.Elapsed = time.Since(im.start)
	im.opt.Progress(im.prog)
}

// file imports one file.
func (im *importer) file(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("import %s: %w", path, err)
	}
	defer f.Close()
	format := im.opt.Format
	if format == "" {
		if format, err = Detect(f); err != nil {
			return fmt.Errorf("import %s: %w", path, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("import %s: %w", path, err)
		}
	}
	if format == MSCONS {
		return im.done(ctx, path)(im.readMSCONS(ctx, path, f))
	}
	if !im.opt.DryRun {
		if handled, err := im.streamHistory(ctx, path, format); handled || err != nil {
			return err
		}
	}
	return im.done(ctx, path)(im.readTabularAs(ctx, path, path, format))
}

// reader imports one delivery that is not a file of its own.
func (im *importer) reader(ctx context.Context, name string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	format := im.opt.Format
	if format == "" {
		head, err := br.Peek(512)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("import %s: %w", name, err)
		}
		format = detect(head)
	}
	if format == MSCONS {
		return im.done(ctx, name)(im.readMSCONS(ctx, name, br))
	}
	tmp, err := os.CreateTemp("", "msql-import-*."+string(format))
	if err != nil {
		return fmt.Errorf("import %s: spool: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, br)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("import %s: spool: %w", name, err)
	}
	return im.done(ctx, name)(im.readTabularAs(ctx, tmp.Name(), name, format))
}

// pendingRows is how many rows of read batches are held before they are
// written: files are read ahead so that one plan — one history commit, one
// watermark — covers them, within a bound on memory.
const pendingRows = 2_000_000

// done counts a file once read and queues its batches, writing what is
// queued once it holds pendingRows.
func (im *importer) done(ctx context.Context, name string) func([]batch, error) error {
	return func(bs []batch, err error) error {
		if err != nil {
			return err
		}
		im.rep.Files++
		im.prog.Files++
		im.pending = append(im.pending, bs...)
		for _, b := range bs {
			im.queued += b.rows
		}
		if im.queued >= pendingRows {
			return im.flush(ctx, name)
		}
		im.progress(name)
		return nil
	}
}

// flush writes the queued batches.
func (im *importer) flush(ctx context.Context, name string) error {
	bs := im.pending
	im.pending, im.queued = nil, 0
	err := im.write(ctx, name, bs)
	im.progress(name)
	return err
}

// refuse records a refused batch (counted in Batches where it was read).
func (im *importer) refuse(r Refusal) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.rep.Refused = append(im.rep.Refused, r)
}
