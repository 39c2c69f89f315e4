package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meterstore/meterstore/engine"
)

// dotCmd is one shell dot-command.
type dotCmd struct {
	args string
	help string
	run  func(sh *shell, args []string, rest string) error
	// tiers marks commands that need a deployment (not --scratch).
	tiers bool
}

var dotCommands map[string]dotCmd

func init() {
	dotCommands = map[string]dotCmd{
		".help":       {"", "this list", (*shell).dotHelp, false},
		".quit":       {"", "leave (also .exit, Ctrl-D)", func(sh *shell, _ []string, _ string) error { sh.quit = true; return nil }, false},
		".exit":       {"", "leave", func(sh *shell, _ []string, _ string) error { sh.quit = true; return nil }, false},
		".tables":     {"", "the relations you can query", (*shell).dotTables, false},
		".schema":     {"[table]", "columns and types of a relation (default readings)", (*shell).dotSchema, false},
		".mode":       {"FORMAT|READMODE", "output format (" + strings.Join(formats, " ") + "), or a read mode (unified historical operational) — the names do not overlap", (*shell).dotMode, false},
		".format":     {"FORMAT", "output format only (" + strings.Join(formats, " ") + ")", (*shell).dotFormat, false},
		".readmode":   {"unified|historical|operational", "which tiers queries read: both split at the watermark, Iceberg only, or the hot window only", (*shell).dotReadMode, true},
		".output":     {"[FILE]", "send results to FILE (no argument: back to the terminal)", (*shell).dotOutput, false},
		".once":       {"FILE", "send the next result to FILE", (*shell).dotOnce, false},
		".read":       {"FILE", "run the statements and dot-commands in FILE", (*shell).dotRead, false},
		".timer":      {"on|off", "print each statement's wall time", (*shell).dotTimer, false},
		".maxrows":    {"N", "print at most N rows in table mode (0 = all)", (*shell).dotMaxRows, false},
		".maxwidth":   {"N", "truncate table cells wider than N (0 = no limit)", (*shell).dotMaxWidth, false},
		".nullvalue":  {"TEXT", "how NULL is shown", (*shell).dotNull, false},
		".pager":      {"on|off", "page results taller than the terminal through $PAGER (less -FRX)", (*shell).dotPager, false},
		".provenance": {"on|off", "the dim line under every result: watermark, tiers, read mode", (*shell).dotProvenance, false},
		".explain":    {"[--verbose] QUERY", "the engine's split: ranges, elision, files kept/pruned, the SQL sent to PostgreSQL; data files counted per partition (--verbose lists them)", (*shell).dotExplain, true},
		".watermark":  {"", "each table's tiering watermark and current snapshot", (*shell).dotWatermark, true},
		".snapshots":  {"[table]", "the Iceberg snapshots with their watermarks", (*shell).dotSnapshots, true},
		".asof":       {"SNAPSHOT|TIMESTAMP [VERSION] | off", "read Iceberg pinned to a snapshot, or to each table's snapshot current at TIMESTAMP, optionally under a version ceiling", (*shell).dotAsOf, true},
		".known-at":   {"TIMESTAMP | off", "only versions recorded at or before TIMESTAMP", (*shell).dotKnownAt, true},
		".scope":      {"COLUMN VALUE", "confine the session to a merge-key column value (cannot be undone)", (*shell).dotScope, true},
		".refresh":    {"", "re-read the Iceberg tables and recompute the system tables (system.tables, .config, .resolution, .snapshots)", (*shell).dotRefresh, true},
		".export":     {"FILE.parquet|FILE.csv|FILE.xlsx QUERY", "stream a query's result to a file (memory bounded by one batch); Parquet (ZSTD) records watermark, snapshot, read mode, tiers and the query in its key-value metadata; .xlsx through DuckDB's excel extension", (*shell).dotExport, true},
		".status":     {"", "the session's read mode, pins, scope and time zone", (*shell).dotStatus, true},
		".timezone":   {"[ZONE|default]", "the session time zone (what '2025-10-24' means, how TIMESTAMPTZ prints); default is [engine] time_zone, else UTC; SET TimeZone = 'Europe/Berlin' does the same", (*shell).dotTimeZone, false},
		".plot":       {"[--png FILE] [--width N] [--height N] [QUERY]", "draw the last result's (or QUERY's) time series: the first DATE/TIMESTAMP(TZ) column is the axis (Berlin local time), numeric columns the series, text columns split them", (*shell).dotPlot, false},
		".attach":     {"hot", "attach the deployment's PostgreSQL read-only as hot (postgres extension) and run statements as raw DuckDB, e.g. SELECT * FROM hot.public.readings_versions LIMIT 5; .detach returns to readings (unconfined sessions only)", (*shell).dotAttach, true},
		".detach":     {"", "leave .attach hot: statements go through the engine again", (*shell).dotDetach, true},
		".extensions": {"", "the DuckDB extensions loaded (postgres_scanner, iceberg, …), from where, and the path each tier is read through", (*shell).dotExtensions, true},
		".import":     dotImport,
		".functions":  {"[PATTERN]", "the SQL functions (DuckDB's and the metering functions meter_*) whose name contains PATTERN (or matches it as LIKE does, when it holds %)", (*shell).dotFunctions, false},
		".param":      {"set NAME VALUE|unset NAME|clear|list", "statement parameters: $NAME (or $1 for .param set 1 …) in a statement is bound to VALUE as text, which DuckDB casts where it is used — never pasted into the SQL", (*shell).dotParam, false},
	}
}

func dotNames() []string {
	var out []string
	for n := range dotCommands {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// dotCommand runs a dot-command typed at the prompt, reporting errors.
func (sh *shell) dotCommand(line string) {
	sh.report(sh.dot(line))
}

func (sh *shell) dot(line string) error {
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), ";"))
	cmd, ok := dotCommands[name]
	if !ok {
		return withHint(fmt.Errorf("unknown command %s", name), ".help lists the commands")
	}
	if cmd.tiers && sh.es == nil {
		return fmt.Errorf("%s needs a deployment; --scratch has no tiers", name)
	}
	return cmd.run(sh, strings.Fields(rest), rest)
}

func (sh *shell) dotHelp(_ []string, _ string) error {
	w := sh.p.target()
	for _, n := range dotNames() {
		c := dotCommands[n]
		fmt.Fprintf(w, "%-12s %-34s %s\n", n, c.args, c.help)
	}
	fmt.Fprintln(w, "\nStatements end with ';' and may span lines. Ctrl-C cancels a running statement, Ctrl-R searches the history, Tab completes.")
	return nil
}

func onOff(args []string, name string) (bool, error) {
	if len(args) != 1 || (args[0] != "on" && args[0] != "off") {
		return false, fmt.Errorf("%s takes on or off", name)
	}
	return args[0] == "on", nil
}

func (sh *shell) dotTimer(args []string, _ string) (err error) {
	sh.p.timer, err = onOff(args, ".timer")
	return err
}

func (sh *shell) dotPager(args []string, _ string) (err error) {
	sh.p.pager, err = onOff(args, ".pager")
	return err
}

func (sh *shell) dotProvenance(args []string, _ string) (err error) {
	sh.p.provenance, err = onOff(args, ".provenance")
	return err
}

func (sh *shell) dotMaxRows(args []string, _ string) error {
	if len(args) != 1 {
		return fmt.Errorf(".maxrows takes a number (0 = all); now %d", sh.p.maxRows)
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 {
		return fmt.Errorf(".maxrows %q: not a count", args[0])
	}
	sh.p.maxRows = n
	return nil
}

func (sh *shell) dotMaxWidth(args []string, _ string) error {
	if len(args) != 1 {
		return fmt.Errorf(".maxwidth takes a number (0 = no limit); now %d", sh.p.maxWidth)
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 || n == 1 {
		return fmt.Errorf(".maxwidth %q: use 0 or at least 2", args[0])
	}
	sh.p.maxWidth = n
	return nil
}

func (sh *shell) dotNull(_ []string, rest string) error {
	sh.p.nullText = rest
	return nil
}

var readModes = map[string]engine.ReadMode{"unified": engine.Unified, "historical": engine.Historical, "operational": engine.Operational}

// dotMode switches the output format or, for a read-mode name, the read mode:
// the issue names both ".mode", and the two vocabularies do not overlap.
func (sh *shell) dotMode(args []string, rest string) error {
	if len(args) == 1 {
		if _, ok := readModes[args[0]]; ok {
			return sh.dotReadMode(args, rest)
		}
	}
	return sh.dotFormat(args, rest)
}

func (sh *shell) dotFormat(args []string, _ string) error {
	if len(args) != 1 {
		return fmt.Errorf(".mode takes a format (%s) or a read mode (unified, historical, operational); format now %s", strings.Join(formats, ", "), sh.p.format)
	}
	if err := validFormat(args[0]); err != nil {
		return err
	}
	sh.p.format = args[0]
	return nil
}

func (sh *shell) dotReadMode(args []string, _ string) error {
	if sh.es == nil {
		return errors.New("read modes need a deployment; --scratch has no tiers")
	}
	if len(args) != 1 {
		return fmt.Errorf(".readmode takes unified, historical or operational; now %s", sh.es.describe())
	}
	m, ok := readModes[args[0]]
	if !ok {
		return fmt.Errorf("unknown read mode %q; use unified, historical or operational", args[0])
	}
	prevMode, prevAsOf := sh.es.mode, sh.es.asOf
	sh.es.mode, sh.es.asOf = m, nil
	if err := sh.es.rebuild(); err != nil {
		sh.es.mode, sh.es.asOf = prevMode, prevAsOf
		return err
	}
	fmt.Fprintln(sh.p.target(), sh.es.describe())
	return nil
}

func (sh *shell) dotOutput(args []string, rest string) error {
	if sh.p.file != nil {
		sh.p.file.Close()
		sh.p.file = nil
		sh.p.out = sh.io.out
	}
	if rest == "" || rest == "stdout" {
		return nil
	}
	f, err := os.Create(rest)
	if err != nil {
		return err
	}
	sh.p.file, sh.p.out = f, f
	return nil
}

func (sh *shell) dotOnce(_ []string, rest string) error {
	if rest == "" {
		return errors.New(".once takes a file name")
	}
	f, err := os.Create(rest)
	if err != nil {
		return err
	}
	sh.p.once = f
	return nil
}

func (sh *shell) dotRead(_ []string, rest string) error {
	if rest == "" {
		return errors.New(".read takes a file name")
	}
	if sh.depth > 8 {
		return errors.New(".read nested too deeply")
	}
	b, err := os.ReadFile(rest)
	if err != nil {
		return err
	}
	sh.depth++
	defer func() { sh.depth-- }()
	return sh.runText(string(b))
}

func (sh *shell) dotTables(_ []string, _ string) error {
	t := table{columns: []string{"name", "kind", "note"}}
	if sh.es != nil {
		for _, c := range sh.es.eng.Tables() {
			t.rows = append(t.rows,
				[]any{c.ResolvedName(), "resolved", "latest version per merge key " + strings.Join(c.MergeKey(), ", ")},
				[]any{c.Name(), "versions", "every stored version"})
		}
	}
	if db := sh.duckDB(); db != nil {
		rows, err := db.QueryContext(sh.ctx, "SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE schema_name = 'system' UNION ALL SELECT schema_name || '.' || view_name FROM duckdb_views() WHERE schema_name = 'system' ORDER BY 1")
		if err == nil {
			for rows.Next() {
				var n string
				if rows.Scan(&n) == nil {
					t.rows = append(t.rows, []any{n, "system", ""})
				}
			}
			rows.Close()
		}
		if sh.es == nil {
			rows, err := db.QueryContext(sh.ctx, "SELECT table_name FROM duckdb_tables() WHERE NOT internal UNION ALL SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1")
			if err == nil {
				for rows.Next() {
					var n string
					if rows.Scan(&n) == nil {
						t.rows = append(t.rows, []any{n, "duckdb", ""})
					}
				}
				rows.Close()
			}
		}
	}
	return sh.p.print(t, "", 0)
}

func (sh *shell) dotSchema(args []string, _ string) error {
	name := "readings"
	if len(args) > 0 {
		name = args[0]
	}
	if sh.es == nil {
		return sh.runStatement(sh.ctx, "DESCRIBE "+name)
	}
	d, err := sh.es.eng.Describe(sh.ctx, "SELECT * FROM "+name)
	if err != nil {
		return err
	}
	t := table{columns: []string{"column", "type", "role"}}
	var cfgRole func(string) string
	for _, c := range sh.es.eng.Tables() {
		if strings.EqualFold(c.Name(), name) || strings.EqualFold(c.ResolvedName(), name) {
			c := c
			cfgRole = func(col string) string {
				switch {
				case c.IsMergeKeyColumn(col):
					return "merge key"
				case col == "version" || col == "version_scope":
					return "version"
				}
				if x, ok := c.Column(col); ok {
					return strings.ToLower(fmt.Sprint(x.Kind))
				}
				return ""
			}
		}
	}
	for i, c := range d.Columns {
		role := ""
		if cfgRole != nil {
			role = cfgRole(c)
		}
		t.rows = append(t.rows, []any{c, d.Types[i], role})
	}
	return sh.p.print(t, "", 0)
}

func (sh *shell) dotExplain(_ []string, rest string) error {
	q, verbose := strings.CutPrefix(rest, "--verbose")
	if verbose && q != "" && q[0] != ' ' && q[0] != '\n' {
		q, verbose = rest, false
	}
	q = strings.TrimSpace(q)
	if q == "" {
		return errors.New(".explain takes a query (.explain --verbose QUERY lists every data file)")
	}
	text, err := sh.es.eng.Explain(sh.ctx, q, sh.params.args()...)
	if err != nil {
		return err
	}
	if !verbose {
		text = condenseExplain(text)
	}
	_, err = fmt.Fprint(sh.p.target(), text)
	sh.p.endResult()
	return err
}

// dotWatermark lists each table's watermark and snapshot; the count of hot
// partitions (every tenant's) only where the session is not scoped.
func (sh *shell) dotWatermark(_ []string, _ string) error {
	scoped := len(sh.es.eng.Scope()) > 0
	t := table{columns: []string{"table", "watermark", "snapshot"}}
	if !scoped {
		t.columns = append(t.columns, "hot partitions")
	}
	for _, tb := range sh.es.d.store.Tables() {
		w, err := tb.Watermark(sh.ctx)
		if err != nil {
			return err
		}
		var wm any
		if !w.IsZero() {
			wm = w.UTC()
		}
		row := []any{tb.Config().Name(), wm, tb.Cold().CurrentSnapshotID()}
		if !scoped {
			parts, err := tb.Hot().Partitions(sh.ctx)
			if err != nil {
				return err
			}
			row = append(row, len(parts))
		}
		t.rows = append(t.rows, row)
	}
	return sh.p.print(t, "", 0)
}

// dotSnapshots lists the Iceberg snapshots, refused in a scoped session as
// system.snapshots is: they say when every tenant's writes were committed.
func (sh *shell) dotSnapshots(args []string, _ string) error {
	if sc := sh.es.eng.Scope(); len(sc) > 0 {
		return withHint(fmt.Errorf(".snapshots says when every tenant's writes were committed, and this session is scoped to %s",
			strings.Join(sc, ", ")), "an answer's provenance names the snapshot and watermark it was read at; .asof takes a point in time")
	}
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	t, err := snapshotsTable(sh.ctx, sh.es.d, name)
	if err != nil {
		return err
	}
	return sh.p.print(t, "", 0)
}

func (sh *shell) dotAsOf(args []string, _ string) error {
	if len(args) == 1 && args[0] == "off" {
		sh.es.asOf = nil
		if err := sh.es.rebuild(); err != nil {
			return err
		}
		fmt.Fprintln(sh.p.target(), sh.es.describe())
		return nil
	}
	if len(args) < 1 || len(args) > 3 {
		return errors.New(".asof takes SNAPSHOT-ID or TIMESTAMP, then optionally a version ceiling; .asof off returns to current data")
	}
	pin := &asOfPin{}
	if id, err := strconv.ParseInt(args[0], 10, 64); err == nil && len(args[0]) > 10 {
		pin.snapshot, pin.label = id, fmt.Sprintf("snapshot %d", id)
	} else {
		ts := args[0]
		verArgs := args[1:]
		if len(args) >= 2 && strings.Contains(args[1], ":") { // "2026-01-31 12:00"
			ts += " " + args[1]
			verArgs = args[2:]
		}
		at, err := parseInstant(ts)
		if err != nil {
			return err
		}
		// engine.AsOfTime pins each table to its snapshot current at the
		// instant; an instant before the first snapshot fails when read.
		pin.at, pin.label = &at, "snapshot current at "+at.Format(time.RFC3339)
		args = append([]string{args[0]}, verArgs...)
	}
	if len(args) == 2 {
		v, err := parseUint(args[1])
		if err != nil {
			return err
		}
		pin.maxVersion = v
		pin.label += fmt.Sprintf(", versions ≤ %d", *v)
	}
	prev := sh.es.asOf
	sh.es.asOf = pin
	if err := sh.es.rebuild(); err != nil {
		sh.es.asOf = prev
		return err
	}
	fmt.Fprintln(sh.p.target(), sh.es.describe())
	return nil
}

func (sh *shell) dotKnownAt(args []string, rest string) error {
	if rest == "off" {
		sh.es.knownAt = nil
	} else {
		if rest == "" {
			return errors.New(".known-at takes a timestamp, or off")
		}
		at, err := parseInstant(rest)
		if err != nil {
			return err
		}
		sh.es.knownAt = &at
	}
	if err := sh.es.rebuild(); err != nil {
		return err
	}
	fmt.Fprintln(sh.p.target(), sh.es.describe())
	return nil
}

func (sh *shell) dotScope(args []string, _ string) error {
	if len(args) != 2 {
		return errors.New(".scope takes COLUMN VALUE (a merge-key column such as tenant)")
	}
	sh.es.scopes = append(sh.es.scopes, [2]string{args[0], args[1]})
	if err := sh.es.rebuild(); err != nil {
		sh.es.scopes = sh.es.scopes[:len(sh.es.scopes)-1]
		_ = sh.es.rebuild()
		return err
	}
	fmt.Fprintln(sh.p.target(), sh.es.describe())
	return nil
}

func (sh *shell) dotRefresh(_ []string, _ string) error {
	now, err := sh.es.d.refreshSystemTables(sh.ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(sh.p.target(), "Iceberg tables re-read; system.tables, system.config, system.resolution, system.partitions, system.snapshots refreshed at %s\n", now.UTC().Format(time.RFC3339))
	return nil
}

func (sh *shell) dotAttach(args []string, _ string) error {
	if len(args) != 1 || args[0] != "hot" {
		return withHint(fmt.Errorf("%w: .attach hot", errUsage), "only the hot tier's PostgreSQL can be attached")
	}
	if sh.es.eng.Confined() {
		return withHint(engine.ErrConfined, "a scoped session reads readings only")
	}
	if _, raw := sh.sess.(*scratchSession); raw {
		return errors.New("hot is already attached; .detach first")
	}
	db := sh.es.d.engine.DB()
	var attached bool
	if err := db.QueryRowContext(sh.ctx, "SELECT count(*) > 0 FROM duckdb_databases() WHERE database_name = 'hot'").Scan(&attached); err != nil {
		return err
	}
	if !attached {
		if err := sh.es.d.engine.AttachHot(sh.ctx, "hot"); err != nil {
			return withHint(err, "go tool task extensions, then [engine] extension_directory or MSQL_DUCKDB_EXTENSIONS; .extensions says what loaded")
		}
	}
	sh.sess = &scratchSession{db: db}
	fmt.Fprintln(sh.p.target(), "PostgreSQL attached read-only as hot; statements now run as raw DuckDB (e.g. SELECT * FROM hot.public.readings_versions LIMIT 5), .detach returns to readings")
	return nil
}

func (sh *shell) dotDetach(_ []string, _ string) error {
	if _, raw := sh.sess.(*scratchSession); !raw {
		return errors.New("nothing attached")
	}
	sh.sess = sh.es
	fmt.Fprintln(sh.p.target(), "statements go through the engine again (hot stays attached for the next .attach hot)")
	return nil
}

func (sh *shell) dotExtensions(_ []string, _ string) error {
	st := sh.es.eng.Extensions()
	w := sh.p.target()
	fmt.Fprintf(w, "hot tier through %s, cold tier through %s\n", st.Hot, st.Cold)
	if st.ObjectStore != "" {
		fmt.Fprintf(w, "cold files on object storage through %s\n", st.ObjectStore)
	}
	if st.Directory == "" {
		fmt.Fprintln(w, "extension directory: none ([engine] extension_directory or MSQL_DUCKDB_EXTENSIONS; go tool task extensions fills one)")
	} else {
		fmt.Fprintf(w, "extension directory: %s (DuckDB %s)\n", st.Directory, st.Platform)
	}
	for _, l := range st.Loaded {
		fmt.Fprintf(w, "loaded: %s\n", l)
	}
	for _, m := range st.Missing {
		fmt.Fprintf(w, "not used: %s\n", m)
	}
	return nil
}

func (sh *shell) dotStatus(_ []string, _ string) error {
	fmt.Fprintf(sh.p.target(), "%s · time zone %s\n", sh.es.describe(), sh.es.eng.TimeZone())
	return nil
}
