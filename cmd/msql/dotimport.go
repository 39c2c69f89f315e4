package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// dotImport is the shell's .import: msql import's options, files and report.
var dotImport = dotCmd{"[options] FILE|DIR …",
	"import MSCONS, CSV or Parquet files as msql import does (--table --format --set --map --time-zone --malo-of --dry-run; .import --help); INSERT INTO readings_versions SELECT … FROM read_csv(…) imports a query's rows the same way",
	(*shell).dotImport, true}

const dotImportUsage = `.import [--table T] [--format mscons|csv|parquet] [--set column=value …]
        [--map source=column …] [--time-zone Z] [--malo-of FILE] [--dry-run] FILE|DIR …

The shell's msql import: the same options, the same batches (each whole or
not at all), the same report (see docs/import.md). A query's rows go in the
same way with INSERT INTO readings_versions SELECT … FROM read_csv(…), its
columns named as the files' are.`

func (sh *shell) dotImport(args []string, _ string) error {
	if err := sh.importable(".import"); err != nil {
		return err
	}
	var f importFlags
	fs := newFlagSet(".import", dotImportUsage, sh.io)
	f.register(fs)
	paths, err := parseInterleaved(fs, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return withHint(errors.New(".import: name the files to import"), ".import deliveries/march.edi  (.import --help for the options)")
	}
	if slices.Contains(paths, "-") {
		return withHint(errors.New(".import -: the shell reads its own statements from standard input"), "msql import - (outside the shell) reads a delivery from a pipe")
	}
	opt, err := f.options()
	if err != nil {
		return err
	}
	return importPaths(sh.ctx, sh.es.d.store, opt, paths, sh.importIO())
}

// importable refuses an import in a session confined to a scope: its rows
// could name another scope's readings, which such a session never touches.
func (sh *shell) importable(what string) error {
	if sh.es.eng.Confined() {
		return withHint(fmt.Errorf("%s: this session is confined to %s and never writes", what, strings.Join(sh.es.eng.Scope(), ",")),
			"import in an unconfined session (without --scope), with --set for the scope's column")
	}
	return nil
}

// importIO writes the report where results go and progress to standard error.
func (sh *shell) importIO() stdio {
	return stdio{out: sh.p.target(), err: sh.io.err, tty: sh.p.progress}
}

// importInsert is INSERT INTO table [BY NAME] [(column, …)] query.
type importInsert struct {
	table   string
	columns []string
	query   string
}

// runImportInsert imports the rows of an INSERT INTO a store table's SELECT
// through ingest.Query, in a session over a deployment; handled is false for
// any other statement, which runs as it would.
func (sh *shell) runImportInsert(ctx context.Context, stmt string) (handled bool, err error) {
	if sh.es == nil {
		return false, nil
	}
	ins, ok, err := parseImportInsert(stmt)
	if !ok {
		return false, err
	}
	defer sh.p.endResult()
	if err != nil {
		return true, err
	}
	if err := sh.importable("INSERT"); err != nil {
		return true, err
	}
	if _, ok := sh.es.d.store.Table(ins.table); !ok {
		var names []string
		for _, t := range sh.es.d.store.Tables() {
			names = append(names, t.Config().Name())
		}
		return true, withHint(fmt.Errorf("INSERT INTO %s: not a table of the store (tables: %s)", ins.table, strings.Join(names, ", ")),
			"INSERT INTO "+names[0]+" SELECT * FROM read_csv('deliveries.csv', all_varchar = true)")
	}
	q := ins.query
	if len(ins.columns) > 0 {
		quoted := make([]string, len(ins.columns))
		for i, c := range ins.columns {
			quoted[i] = sqltext.Ident(c)
		}
		q = "SELECT * FROM (" + q + "\n) AS q(" + strings.Join(quoted, ", ") + ")"
	}
	io := sh.importIO()
	bar := &progressBar{w: io.err, tty: io.tty}
	opt := ingest.Options{Table: ins.table, Progress: bar.update}
	rep, err := ingest.Query(ctx, sh.es.d.store, opt, "INSERT … SELECT", q)
	return true, finishImport(rep, bar, err, io)
}

// parseImportInsert reads INSERT INTO name [BY NAME] [(columns)] query; ok is
// false for a statement that is not an INSERT INTO a query (INSERT … VALUES
// included). INSERT … BY POSITION, DEFAULT VALUES and the like are refused,
// naming the form that works.
func parseImportInsert(stmt string) (ins importInsert, ok bool, err error) {
	s := strings.TrimSpace(sqltext.StripComments(stmt))
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	rest, ok := keyword(s, "INSERT")
	if !ok {
		return ins, false, nil
	}
	if rest, ok = keyword(rest, "INTO"); !ok {
		return ins, false, nil
	}
	form := errors.New("write INSERT INTO readings_versions [BY NAME] [(column, …)] SELECT …: the query's columns are the import layout's (docs/import.md)")
	name, rest, ok := qualifiedName(rest)
	if !ok {
		return ins, true, form
	}
	ins.table = name
	if r, ok := keyword(rest, "BY"); ok {
		if rest, ok = keyword(r, "NAME"); !ok {
			return ins, true, fmt.Errorf("INSERT INTO %s BY POSITION: an import takes columns by name; %w", name, form)
		}
	}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "(") {
		if ins.columns, rest, ok = columnList(rest); !ok {
			return ins, true, form
		}
	}
	ins.query = strings.TrimSpace(rest)
	if _, ok := keyword(ins.query, "VALUES"); ok {
		return ins, false, nil // rows typed in are not a delivery: the engine refuses them as a write
	}
	if strings.HasPrefix(ins.query, "(") {
		return ins, true, nil
	}
	for _, kw := range []string{"SELECT", "WITH", "FROM"} {
		if _, ok := keyword(ins.query, kw); ok {
			return ins, true, nil
		}
	}
	return ins, true, form
}

// keyword consumes the keyword kw (any case) at the start of s.
func keyword(s, kw string) (string, bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	if len(s) < len(kw) || !strings.EqualFold(s[:len(kw)], kw) {
		return s, false
	}
	if len(s) > len(kw) && sqltext.IdentByte(s[len(kw)]) {
		return s, false
	}
	return s[len(kw):], true
}

// qualifiedName reads a name, plain or "quoted", perhaps qualified
// (main.readings_versions), and returns its last part.
func qualifiedName(s string) (name, rest string, ok bool) {
	rest = s
	for {
		var part string
		if part, rest, ok = identifier(rest); !ok {
			return "", s, false
		}
		name = part
		if !strings.HasPrefix(rest, ".") {
			return name, rest, true
		}
		rest = rest[1:]
	}
}

// identifier reads one identifier at the start of s.
func identifier(s string) (id, rest string, ok bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	if strings.HasPrefix(s, `"`) {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '"' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			return b.String(), s[i+1:], true
		}
		return "", s, false
	}
	end := 0
	for end < len(s) && sqltext.IdentByte(s[end]) {
		end++
	}
	if end == 0 {
		return "", s, false
	}
	return strings.ToLower(s[:end]), s[end:], true
}

// columnList reads (a, "b", …).
func columnList(s string) (cols []string, rest string, ok bool) {
	rest = strings.TrimSpace(s)[1:]
	for {
		var c string
		if c, rest, ok = identifier(rest); !ok {
			return nil, s, false
		}
		cols = append(cols, c)
		rest = strings.TrimLeft(rest, " \t\r\n")
		switch {
		case strings.HasPrefix(rest, ","):
			rest = rest[1:]
		case strings.HasPrefix(rest, ")"):
			return cols, rest[1:], true
		default:
			return nil, s, false
		}
	}
}
