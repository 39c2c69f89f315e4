package main

import (
	"bufio"
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
// prints its result as it is read (see windowRows).
func (sh *shell) runStatement(ctx context.Context, stmt string) error {
	if zone, ok := timeZoneOf(stmt); ok {
		return sh.setTimeZone(ctx, zone)
	}
	if handled, err := sh.runImportInsert(ctx, stmt); handled {
		return err
	}
	defer sh.p.endResult()
	start := time.Now()
	stopProgress := startProgress(ctx, sh.sess, sh.p)
	s, err := sh.sess.run(ctx, windowRows, stmt, sh.params.args()...)
	if err != nil {
		stopProgress()
		return err
	}
	kept, started, err := sh.p.printStream(s, start, stopProgress)
	if err == nil {
		sh.last = kept
	}
	if started {
		return incomplete(err)
	}
	return err
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

// print renders one result held in memory.
func (p *printer) print(t table, prov string, elapsed time.Duration) error {
	defer p.endResult()
	_, _, err := p.printStream(tableStream(t), time.Now().Add(-elapsed), func() {})
	return err
}

// printStream reads the first window of s and prints the result: a result
// that fits in the window at once (through the pager when it is taller than
// the terminal), a longer one as it is read. kept is the result when it fit
// (nil otherwise); started reports that rows were passed on before an error.
func (p *printer) printStream(s *rowStream, start time.Time, stopProgress func()) (kept *table, started bool, err error) {
	window, complete, err := s.fill(windowRows)
	stopProgress()
	if err != nil {
		return nil, false, err
	}
	if !complete {
		defer s.close()
	} else if s.plan && (p.format == "table" || p.format == "box") {
		return nil, false, p.write(planText(window))
	}
	opts := renderOptions{format: p.format, maxWidth: p.maxWidth, nullText: p.nullText, values: p.values}
	rw := &stickyWriter{}
	var head bytes.Buffer
	rw.w = &head
	out := newRowWriter(rw, s.columns, columnTypes(s.columns, s.types, window), opts, window)
	limit := int64(-1)
	if p.maxRows > 0 && p.format == "table" {
		limit = int64(p.maxRows)
	}
	var shown, total int64
	emit := func(r []any) {
		total++
		if limit < 0 || shown < limit {
			out.row(r)
			shown++
		}
	}
	out.begin()
	for _, r := range window {
		emit(r)
	}
	if complete {
		p.footer(rw, out, shown, total, s.prov, start)
		return &table{columns: s.columns, types: s.types, rows: window}, false, p.write(head.Bytes())
	}
	dst, finish := p.streamTarget()
	bw := bufio.NewWriterSize(dst, 64<<10)
	rw.w = bw
	bw.Write(head.Bytes())
	head = bytes.Buffer{}
	window = nil
	for rw.err == nil {
		r, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			bw.Flush()
			finish()
			return nil, true, err
		}
		emit(r)
	}
	if rw.err != nil { // the pager was left: the rest is not wanted
		finish()
		return nil, true, nil
	}
	if err := s.close(); err != nil {
		bw.Flush()
		finish()
		return nil, true, err
	}
	p.footer(rw, out, shown, total, s.prov, start)
	err = bw.Flush()
	if ferr := finish(); err == nil {
		err = ferr
	}
	return nil, true, err
}

// write prints a whole result, through the pager when it is taller than the terminal.
func (p *printer) write(b []byte) error {
	if p.toTerminal() && p.pager {
		return page(p.out, b)
	}
	_, err := p.target().Write(b)
	return err
}

// planText is a query plan as its text: EXPLAIN's lines whole, not a table
// of cells cut at the maximum width (the plan's text is its last column).
func planText(rows [][]any) []byte {
	var b bytes.Buffer
	for _, r := range rows {
		if len(r) > 0 && r[len(r)-1] != nil {
			fmt.Fprintln(&b, strings.TrimRight(fmt.Sprint(r[len(r)-1]), "\n"))
		}
	}
	return b.Bytes()
}

// footer ends a result: the row count, the rows not shown, provenance, timer.
func (p *printer) footer(w io.Writer, out rowWriter, shown, total int64, prov string, start time.Time) {
	out.end(shown)
	if shown < total {
		fmt.Fprintf(w, "(%d more rows not shown; .maxrows 0 shows all)\n", total-shown)
	}
	if p.provenance && prov != "" && p.format == "table" {
		if p.toTerminal() {
			fmt.Fprintf(w, "\x1b[2m%s\x1b[0m\n", prov)
		} else {
			fmt.Fprintf(w, "-- %s\n", prov)
		}
	}
	if p.timer {
		fmt.Fprintf(w, "Run Time: %.3fs\n", time.Since(start).Seconds())
	}
}

// streamTarget is where a result longer than the window goes: the pager on
// a terminal, else the target; finish waits for the pager.
func (p *printer) streamTarget() (io.Writer, func() error) {
	if p.toTerminal() && p.pager {
		if pw, err := startPager(); err == nil {
			return pw, pw.Close
		}
	}
	return p.target(), func() error { return nil }
}

// stickyWriter keeps the first write error, so a result being streamed stops
// when its reader (the pager) has gone.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(b)
	s.err = err
	return n, err
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
