package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"meterstore/engine"
	"meterstore/udf"
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
	interact bool
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
  msql <command> --help             operator commands: %s`

func runShell(ctx context.Context, args []string, io stdio) error {
	var f shellFlags
	fs := newFlagSet("msql", fmt.Sprintf(shellUsage, strings.Join(commandNames(), ", ")), io)
	fs.Var(&f.commands, "c", "run this SQL statement (repeatable) and exit")
	fs.StringVar(&f.file, "f", "", "run the statements in this file and exit")
	fs.StringVar(&f.format, "format", "", "output format: table, csv, json, jsonl, markdown, line (default table on a terminal, csv otherwise)")
	fs.StringVar(&f.output, "o", "", "write results to this file instead of stdout")
	fs.BoolVar(&f.scratch, "scratch", false, "bare in-memory DuckDB with the metering functions; no tiers, no configuration")
	fs.Var(&f.scope, "scope", "confine the session to column=value (repeatable; a merge-key column such as tenant)")
	fs.BoolVar(&f.noProv, "no-provenance", false, "do not print the provenance line under results")
	fs.IntVar(&f.maxWidth, "max-width", 40, "truncate table cells wider than this (0 = no limit)")
	fs.IntVar(&f.maxRows, "max-rows", 0, "print at most this many rows of a result in table mode (0 = all)")
	f.deploy.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return withHint(fmt.Errorf("%w: unknown command %q", errUsage, fs.Arg(0)), "msql --help lists the commands")
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
	if f.scratch {
		db, err := udf.Open("")
		if err != nil {
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
		eng := d.engine
		for _, s := range f.scope {
			col, val, ok := strings.Cut(s, "=")
			if !ok {
				return fmt.Errorf("%w: --scope %q: use column=value", errUsage, s)
			}
			if eng, err = eng.Scoped(col, val); err != nil {
				return err
			}
		}
		sess = &engineSession{eng: eng, d: d}
	}
	p := &printer{out: out, errOut: io.err, format: f.format, maxWidth: f.maxWidth, maxRows: f.maxRows, provenance: !f.noProv && f.format == "table"}
	switch {
	case len(f.commands) > 0:
		for _, c := range f.commands {
			for _, stmt := range splitAll(c) {
				if err := runStatement(ctx, sess, p, stmt); err != nil {
					return err
				}
			}
		}
		return nil
	case f.file != "":
		b, err := os.ReadFile(f.file)
		if err != nil {
			return err
		}
		return runScript(ctx, sess, p, string(b))
	case !io.tty:
		b, err := readAll(io.in)
		if err != nil {
			return err
		}
		return runScript(ctx, sess, p, b)
	}
	return interactive(ctx, sess, p, io)
}

func readAll(r io.Reader) (string, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}

func runScript(ctx context.Context, sess session, p *printer, script string) error {
	for _, stmt := range splitAll(script) {
		if err := runStatement(ctx, sess, p, stmt); err != nil {
			return err
		}
	}
	return nil
}

func commandNames() []string {
	var out []string
	for n := range subcommands {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// session runs one statement.
type session interface {
	run(ctx context.Context, stmt string) (table, string, error)
}

// scratchSession is a bare DuckDB: any statement runs, unrestricted.
type scratchSession struct{ db *sql.DB }

func (s *scratchSession) run(ctx context.Context, stmt string) (table, string, error) {
	rows, err := s.db.QueryContext(ctx, stmt)
	if err != nil {
		return table{}, "", err
	}
	t, err := collect(rows)
	return t, "", err
}

func collect(rows *sql.Rows) (table, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return table{}, err
	}
	t := table{columns: cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return table{}, err
		}
		for i, v := range vals {
			vals[i] = engine.Normalize(v)
		}
		t.rows = append(t.rows, vals)
	}
	return t, rows.Err()
}

// printer renders results and their provenance.
type printer struct {
	out, errOut io.Writer
	format      string
	maxWidth    int
	maxRows     int
	provenance  bool
	nullText    string
}

func runStatement(ctx context.Context, sess session, p *printer, stmt string) error {
	t, prov, err := sess.run(ctx, stmt)
	if err != nil {
		return err
	}
	shown := t
	if p.maxRows > 0 && len(t.rows) > p.maxRows && p.format == "table" {
		shown.rows = t.rows[:p.maxRows]
	}
	if err := render(p.out, shown, p.format, p.maxWidth, p.nullText); err != nil {
		return err
	}
	if len(shown.rows) < len(t.rows) {
		fmt.Fprintf(p.out, "(%d more rows not shown; .maxrows 0 shows all)\n", len(t.rows)-len(shown.rows))
	}
	if p.provenance && prov != "" {
		fmt.Fprintf(p.out, "\x1b[2m%s\x1b[0m\n", prov)
	}
	return nil
}
