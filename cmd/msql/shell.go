package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/meterstore/meterstore/internal/duckfmt"
	"github.com/meterstore/meterstore/udf"
)

var errHelp = errors.New("help shown")

// multiFlag is a repeatable string flag (-c SQL -c SQL).
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// shellFlags are the flags of the shell and of every command that opens a deployment.
type shellFlags struct {
	commands multiFlag
	file     string
	format   string
	output   string
	scratch  bool
	deploy   deployFlags
	scope    multiFlag
	noProv   bool
	maxWidth int
	maxRows  int
	null     string
	version  bool
}

// register declares the shell's flags on fs (the deployment flags among them).
func (f *shellFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.commands, "c", "run this SQL statement (repeatable) and exit")
	fs.StringVar(&f.file, "f", "", "run the statements in this file and exit")
	fs.StringVar(&f.format, "format", "", "output format: "+strings.Join(formats, ", ")+" (default table on a terminal, csv otherwise)")
	fs.StringVar(&f.output, "o", "", "write results to this file instead of stdout")
	fs.BoolVar(&f.scratch, "scratch", false, "bare in-memory DuckDB with the metering functions; no tiers, no configuration")
	fs.Var(&f.scope, "scope", "confine the session to column=value (repeatable; a merge-key column such as tenant)")
	fs.BoolVar(&f.noProv, "no-provenance", false, "do not print the provenance line under results")
	fs.IntVar(&f.maxWidth, "max-width", 40, "truncate table cells wider than this (0 = no limit)")
	fs.IntVar(&f.maxRows, "max-rows", 0, "print at most this many rows of a result in table mode (0 = all)")
	fs.StringVar(&f.null, "null", "NULL", "how table, markdown and line output show NULL")
	fs.BoolVar(&f.version, "version", false, "print msql's version and DuckDB's, and exit")
	f.deploy.register(fs)
}

func newFlagSet(name, usage string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprintf(io.err, "%s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

const shellUsage = `msql — SQL over metering readings across PostgreSQL (hot) and Iceberg (cold).

Usage:
  msql [flags]                      interactive shell (embedded default unless --config/--dsn)
  msql -c "SELECT …" [-c …]         run statements and exit (non-zero on the first failure)
  msql -f script.sql                run a script; SQL on stdin works too
  msql --scratch -c "SQL"           bare DuckDB with the metering functions, no tiers
  msql <command> --help             operator commands: %s

Flags may come before or after a command (msql --dsn … demo = msql demo --dsn …).
Parameters: .param set malo 51238696781, then WHERE malo_id = $malo (bound, not pasted).`

func runShell(ctx context.Context, args []string, io stdio) error {
	var f shellFlags
	fs := newFlagSet("msql", fmt.Sprintf(shellUsage, strings.Join(commandNames(), ", ")), io)
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return withHint(fmt.Errorf("%w: unknown command %q", errUsage, fs.Arg(0)), "msql --help lists the commands")
	}
	if f.version {
		return printVersion(ctx, io)
	}
	if f.format == "" {
		f.format = "csv"
		if io.tty && f.output == "" {
			f.format = "table"
		}
	}
	if err := validFormat(f.format); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	out := io.out
	if f.output != "" {
		file, err := os.Create(f.output)
		if err != nil {
			return err
		}
		defer file.Close()
		out = file
	}
	var sess session
	var db *sql.DB
	if f.scratch {
		var err error
		if db, err = udf.Open(""); err != nil {
			return err
		}
		defer db.Close()
		sess = &scratchSession{db: db}
	} else {
		d, err := f.deploy.open(ctx, io)
		if err != nil {
			return err
		}
		defer d.Close()
		es, err := newEngineSession(ctx, d, f.scope)
		if err != nil {
			return err
		}
		sess, db = es, d.engine.DB()
	}
	p := &printer{out: out, errOut: io.err, format: f.format, maxWidth: f.maxWidth, maxRows: f.maxRows,
		provenance: !f.noProv, nullText: f.null, tty: io.tty && f.output == "", pager: true, values: valueFormatter(ctx, db)}
	if f, ok := io.err.(*os.File); ok && io.tty {
		p.progress = term.IsTerminal(int(f.Fd()))
	}
	sh := newShell(ctx, sess, p, io)
	switch {
	case len(f.commands) > 0:
		for _, c := range f.commands {
			if err := sh.runText(c); err != nil {
				return err
			}
		}
		return nil
	case f.file != "":
		b, err := os.ReadFile(f.file)
		if err != nil {
			return err
		}
		return sh.runText(string(b))
	case !io.tty:
		b, err := readAll(io.in)
		if err != nil {
			return err
		}
		return sh.runText(b)
	}
	return interactive(ctx, sess, p, io)
}

func readAll(r io.Reader) (string, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}

func commandNames() []string {
	var out []string
	for n := range subcommands {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// printer renders results and their provenance, and owns the shell's output
// settings (.mode, .maxrows, .timer, .output, …).
type printer struct {
	out, errOut io.Writer
	format      string
	maxWidth    int
	maxRows     int
	provenance  bool
	nullText    string
	timer       bool
	tty         bool // stdout is the terminal: dim provenance, pager
	progress    bool // stderr is the terminal: progress of long statements
	pager       bool
	once        io.WriteCloser // .once: the next result only
	file        io.WriteCloser // .output FILE
	values      duckfmt.Formatter
}

// target is where the next result goes.
func (p *printer) target() io.Writer {
	if p.once != nil {
		return p.once
	}
	return p.out
}

func (p *printer) toTerminal() bool { return p.tty && p.once == nil && p.file == nil }

func (p *printer) endResult() {
	if p.once != nil {
		p.once.Close()
		p.once = nil
	}
}

// runStatement runs one statement with the parameters it uses bound, and
// prints its result.
func (sh *shell) runStatement(ctx context.Context, stmt string) error {
	if zone, ok := timeZoneOf(stmt); ok {
		return sh.setTimeZone(ctx, zone)
	}
	if handled, err := sh.runImportInsert(ctx, stmt); handled {
		return err
	}
	args, err := sh.params.bind(ctx, sh.duckDB(), stmt)
	if err != nil {
		sh.p.endResult()
		return err
	}
	start := time.Now()
	stopProgress := startProgress(ctx, sh.sess, sh.p)
	t, prov, err := sh.sess.run(ctx, stmt, args...)
	stopProgress()
	elapsed := time.Since(start)
	if err != nil {
		sh.p.endResult()
		return err
	}
	sh.last = &t
	return sh.p.print(t, prov, elapsed)
}

// terminalSize is the terminal's width and height, or 100 × 40 off a terminal.
func (p *printer) terminalSize() (int, int) {
	if f, ok := p.out.(*os.File); ok && p.toTerminal() {
		if w, h, err := term.GetSize(int(f.Fd())); err == nil {
			return w, h
		}
	}
	return 100, 40
}

// print renders one result, through the pager when it is taller than the terminal.
func (p *printer) print(t table, prov string, elapsed time.Duration) error {
	defer p.endResult()
	shown := t
	if p.maxRows > 0 && len(t.rows) > p.maxRows && p.format == "table" {
		shown.rows = t.rows[:p.maxRows]
	}
	var buf bytes.Buffer
	if err := render(&buf, shown, renderOptions{format: p.format, maxWidth: p.maxWidth, nullText: p.nullText, values: p.values}); err != nil {
		return err
	}
	if len(shown.rows) < len(t.rows) {
		fmt.Fprintf(&buf, "(%d more rows not shown; .maxrows 0 shows all)\n", len(t.rows)-len(shown.rows))
	}
	if p.provenance && prov != "" && p.format == "table" {
		if p.toTerminal() {
			fmt.Fprintf(&buf, "\x1b[2m%s\x1b[0m\n", prov)
		} else {
			fmt.Fprintf(&buf, "-- %s\n", prov)
		}
	}
	if p.timer {
		fmt.Fprintf(&buf, "Run Time: %.3fs\n", elapsed.Seconds())
	}
	if p.toTerminal() && p.pager {
		return page(p.out, buf.Bytes())
	}
	_, err := p.target().Write(buf.Bytes())
	return err
}

// valueFormatter prints values as DuckDB would in db's session: a TIMESTAMPTZ
// in its TimeZone setting.
func valueFormatter(ctx context.Context, db *sql.DB) duckfmt.Formatter {
	var zone string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('TimeZone')").Scan(&zone); err != nil {
		return duckfmt.Formatter{}
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return duckfmt.Formatter{}
	}
	return duckfmt.Formatter{Location: loc}
}
