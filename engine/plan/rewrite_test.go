package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// TestRewriteGoldens plans the statements of engine/plan/testdata/rewrite/* against
// tiers that return fixed watermarks, file lists and statistics, and compares
// what each becomes — the EXPLAIN lines, the provenance and the rewritten SQL
// — with the file. No PostgreSQL is involved; DuckDB parses, evaluates bounds
// and renders as in a session. Refresh with -update and review the diff.
func TestRewriteGoldens(t *testing.T) {
	paths, err := filepath.Glob("testdata/rewrite/*")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g := &golden{dir: t.TempDir(), cold: map[string]*fixedCold{}, hot: map[string]*fixedHot{}}
			runGolden(t, path, g.do)
		})
	}
}

// golden is one file's tables and the session over them.
type golden struct {
	dir    string
	tables []meterstore.TableConfig
	cold   map[string]*fixedCold
	hot    map[string]*fixedHot
	sess   *session
	paths  ddCase // the last paths command: cold= and hot= path names
}

func (g *golden) do(t *testing.T, c ddCase) string {
	switch c.cmd {
	case "table":
		g.table(t, c)
	case "cold":
		g.coldFiles(t, c)
	case "detached":
		h := g.hot[c.arg("table")]
		require.NotNil(t, h, "line %d: no table %s", c.line, c.arg("table"))
		h.detached = append(h.detached, DetachedPartition{Name: c.arg("name"), From: goldenTime(t, c.arg("from"))})
	case "paths":
		g.paths = c
	case "rewrite", "explain":
		return g.plan(t, c)
	case "projection":
		return g.projection(t, c)
	default:
		t.Fatalf("line %d: unknown command %s", c.line, c.cmd)
	}
	return ""
}

// table declares a table: name=, identity= and attribute= columns (repeated),
// time=point, melo (identify by MeLo).
func (g *golden) table(t *testing.T, c ddCase) {
	spec := meterstore.TableSpec{Name: c.arg("name")}
	for _, n := range c.args["identity"] {
		spec.Columns = append(spec.Columns, meterstore.Column{Name: n, Kind: meterstore.Identity})
	}
	for _, n := range c.args["attribute"] {
		spec.Columns = append(spec.Columns, meterstore.Column{Name: n, Nullable: true})
	}
	if c.arg("time") == "point" {
		spec.TimeModel = meterstore.Point
	}
	cfg, err := spec.Build()
	require.NoError(t, err)
	g.tables = append(g.tables, cfg)
	g.cold[cfg.Name()] = &fixedCold{dir: g.dir}
	g.hot[cfg.Name()] = &fixedHot{}
	g.sess = nil
}

// coldFiles sets a table's snapshot and watermark (zero: nothing archived)
// and, one per input line, its files: a name, then from=lo..hi,
// version=v or v1..v2 and malo=lo..hi (a missing one is a missing
// statistic), marks=keys-unique,superseded (footer marks), ids=none (no
// field ids) and day=none (no stored balancing_day). Each file is
// written, empty, with the table's columns, so DuckDB can bind it.
func (g *golden) coldFiles(t *testing.T, c ddCase) {
	cold := g.cold[c.arg("table")]
	require.NotNil(t, cold, "line %d: no table %s", c.line, c.arg("table"))
	cold.snapshot, _ = strconv.ParseInt(c.arg("snapshot"), 10, 64)
	if w := c.arg("watermark"); w != "" {
		cold.watermark = goldenTime(t, w)
	}
	var cfg meterstore.TableConfig
	for _, x := range g.tables {
		if x.Name() == c.arg("table") {
			cfg = x
		}
	}
	cold.files = nil
	for _, l := range strings.Split(c.input, "\n") {
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		f := ColdFile{Path: filepath.Join(g.dir, fields[0]), Records: 1000, FieldIDs: true, NamesAsIDs: true, BalancingDay: true}
		for _, kv := range fields[1:] {
			k, v, _ := strings.Cut(kv, "=")
			lo, hi, ok := strings.Cut(v, "..")
			if !ok {
				hi = lo
			}
			switch k {
			case "ids": // none: added without field ids; by-id: named otherwise than the table
				switch v {
				case "none":
					f.FieldIDs, f.NamesAsIDs = false, false
				case "by-id":
					f.NamesAsIDs = false
				default:
					t.Fatalf("line %d: unknown ids=%q", c.line, v)
				}
			case "day":
				f.BalancingDay = v != "none"
			case "from":
				a, b := goldenTime(t, lo), goldenTime(t, hi)
				f.FromMin, f.FromMax = &a, &b
			case "version":
				a, err := strconv.ParseUint(lo, 10, 64)
				require.NoError(t, err)
				b, err := strconv.ParseUint(hi, 10, 64)
				require.NoError(t, err)
				f.VersionMin, f.VersionMax = &a, &b
			case "malo":
				f.MaloMin, f.MaloMax = &lo, &hi
			case "marks":
				for _, m := range strings.Split(v, ",") {
					switch m {
					case "keys-unique":
						f.KeysUnique = true
					case "superseded":
						f.Superseded = true
					default:
						t.Fatalf("line %d: unknown mark %q", c.line, m)
					}
				}
			default:
				t.Fatalf("line %d: unknown file statistic %q", c.line, k)
			}
		}
		cold.files = append(cold.files, f)
		writeEmptyParquet(t, cfg, f.Path, f.FieldIDs)
	}
	g.sess = nil
}

// writeEmptyParquet writes a file of cfg's columns and no rows at path, its
// columns carrying their Iceberg field ids as MeterStore's writer writes them,
// or none (a file added from outside).
func writeEmptyParquet(t *testing.T, cfg meterstore.TableConfig, path string, fieldIDs bool) {
	if _, err := os.Stat(path); err == nil {
		return
	}
	opts := "FORMAT parquet"
	if fieldIDs {
		var ids []string
		for _, c := range cfg.Columns() {
			ids = append(ids, fmt.Sprintf("%s: %d", meterstore.QuoteIdent(c.Name), c.FieldID))
		}
		opts += ", FIELD_IDS {" + strings.Join(ids, ", ") + "}"
	}
	conn := duckConn(t)
	_, err := conn.ExecContext(context.Background(), fmt.Sprintf("COPY (%s) TO %s (%s)", emptyRelation(cfg), sqltext.String(path), opts))
	require.NoError(t, err)
}

// plan runs rewrite (the plan) or explain (Explain's text without DuckDB's
// own plan) on a handle derived by the case's arguments: mode=, asof= (a
// snapshot id), maxversion=, knownat=, scope=column:value, isolated=, and
// arg= for each parameter (t:… is a time, anything else a string). With
// stop=PASS (a pass's first word: find, extract, split, elide, …), rewrite
// prints the plan as it stands after that pass (stopped).
func (g *golden) plan(t *testing.T, c ddCase) string {
	ctx := context.Background()
	if g.sess == nil {
		var ts []*Table
		for _, cfg := range g.tables {
			ts = append(ts, &Table{Config: cfg, Hot: g.hot[cfg.Name()], Cold: g.cold[cfg.Name()]})
		}
		g.sess = newSession(t, "", ts...)
	}
	g.choosePaths(t)
	e := g.handle(t, c)
	var args []any
	for _, a := range c.args["arg"] {
		if s, ok := strings.CutPrefix(a, "t:"); ok {
			args = append(args, goldenTime(t, s))
		} else {
			args = append(args, a)
		}
	}
	q := c.input
	if c.cmd == "explain" {
		q = strings.TrimPrefix(q, "EXPLAIN ") // as Explain takes it
	}
	in := e.input(t, q, args...)
	if c.arg("stop") != "" {
		last, err := passIndex(c.arg("stop"))
		require.NoError(t, err, "line %d", c.line)
		return g.tokens(g.stopped(ctx, t, in, last))
	}
	p, err := Run(ctx, in)
	if err != nil {
		return "error: " + err.Error()
	}
	defer p.Release()
	var out string
	if c.cmd == "explain" {
		if err := p.CompleteHotLines(ctx, in.Conn, args); err != nil {
			return "error: explain: " + InUserStatement(err, q, p.SQL).Error()
		}
		out = strings.ReplaceAll(p.ExplainText(), "\n\n", "\n")
		if head, sql, ok := strings.Cut(out, "\nrewritten SQL:\n"); ok {
			out = head + "\nrewritten SQL:\n" + g.readable(sql)
		}
	} else {
		out = strings.Join(append(p.Explain, "provenance: "+p.Provenance.String(), g.readable(p.SQL)), "\n")
	}
	return g.tokens(out)
}

// tokens numbers the scan tokens of out, per table function, and names the
// warehouse $WAREHOUSE: what is random or temporary in a plan.
func (g *golden) tokens(out string) string {
	n := map[string]int{}
	out = scanToken.ReplaceAllStringFunc(out, func(m string) string {
		fn := m[:strings.Index(m, "(")]
		n[fn]++
		return fmt.Sprintf("%s('scan-%d')", fn, n[fn])
	})
	return strings.ReplaceAll(out, g.dir, "$WAREHOUSE")
}

// choosePaths sets the paths each half takes as the last paths command
// named them (cold=read_parquet|iceberg_scan, hot=meter_hot_scan|postgres_query):
// planning renders the extensions' table functions without loading them.
func (g *golden) choosePaths(t *testing.T) {
	paths := &g.sess.paths
	paths.Cold, paths.Hot = ReadParquet, MeterHotScan
	for _, p := range []ColdPath{ReadParquet, IcebergScan} {
		if g.paths.arg("cold") == p.Name() {
			paths.Cold = p
		}
	}
	for _, p := range []HotPath{MeterHotScan, PostgresQuery} {
		if g.paths.arg("hot") == p.Name() {
			paths.Hot = p
		}
	}
	for half, name := range map[string]string{"cold": paths.Cold.Name(), "hot": paths.Hot.Name()} {
		if want := g.paths.arg(half); want != "" && want != name {
			t.Fatalf("line %d: no %s path %q", g.paths.line, half, want)
		}
	}
}

// scanToken is a hot or cold scan's token in rendered SQL: random, so a
// golden numbers them, per table function.
var scanToken = regexp.MustCompile(`meter_(hot_scan|cold_scan|hot_partials)\('[0-9a-f]{32}'\)`)

func (g *golden) handle(t *testing.T, c ddCase) *session {
	e := g.sess
	var err error
	switch c.arg("mode") {
	case "historical":
		e, err = e.InReadMode(Historical)
	case "operational":
		e, err = e.InReadMode(Operational)
	}
	require.NoError(t, err)
	if s := c.arg("asof"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		var mv *uint64
		if m := c.arg("maxversion"); m != "" {
			v, err := strconv.ParseUint(m, 10, 64)
			require.NoError(t, err)
			mv = &v
		}
		e = e.AsOf(id, mv)
	}
	if k := c.arg("knownat"); k != "" {
		e = e.AsKnownAt(goldenTime(t, k))
	}
	for _, s := range c.args["scope"] {
		col, val, _ := strings.Cut(s, ":")
		e, err = e.Scoped(col, val)
		require.NoError(t, err)
	}
	if name := c.arg("isolated"); name != "" {
		e, err = e.Isolated(name)
		require.NoError(t, err)
	}
	return e
}

// goldenTime reads 2025-01-01, 2025-01-01T06:00 or a full RFC 3339 instant, in UTC.
func goldenTime(t *testing.T, s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if x, err := time.Parse(layout, s); err == nil {
			return x.UTC()
		}
	}
	t.Fatalf("not a time: %q", s)
	return time.Time{}
}

// fixedCold is a cold tier of fixed files: one snapshot, its watermark, and
// files whose statistics prune them the way iceberg-go's do — by their "from"
// bounds, a file missing them always kept.
type fixedCold struct {
	dir       string
	snapshot  int64
	watermark time.Time
	files     []ColdFile
}

func (c *fixedCold) Watermark(_ context.Context, snapshot int64) (int64, time.Time, error) {
	switch {
	case c.snapshot == 0:
		return 0, time.Time{}, nil
	case snapshot == 0 || snapshot == c.snapshot:
		return c.snapshot, c.watermark, nil
	}
	return 0, time.Time{}, fmt.Errorf("snapshot %d: %w", snapshot, ErrNoSnapshot)
}

func (c *fixedCold) Plan(_ context.Context, snapshot int64, from, to time.Time, _ map[string]string) (ColdPlan, error) {
	out := ColdPlan{SnapshotID: snapshot, MetadataLocation: "file://" + c.dir + "/metadata/v1.metadata.json"}
	for _, f := range c.files {
		if f.FromMin != nil && f.FromMax != nil &&
			(!to.IsZero() && !f.FromMin.Before(to) || !from.IsZero() && f.FromMax.Before(from)) {
			out.Pruned++
			continue
		}
		out.Files = append(out.Files, f)
	}
	return out, nil
}

func (c *fixedCold) SnapshotAt(context.Context, time.Time) (int64, error) { return c.snapshot, nil }

func (c *fixedCold) DataDirectory() string { return c.dir }
func (c *fixedCold) ReadFile(context.Context, string) (RowPages, error) {
	return nil, fmt.Errorf("not readable")
}

// fixedHot is a hot tier that is planned but never read: its scan SQL is a
// description of the request.
type fixedHot struct{ detached []DetachedPartition }

func (h *fixedHot) Pages(HotScan) (RowPages, error) {
	return nil, fmt.Errorf("fixed hot tier: not readable")
}

func (h *fixedHot) Detached(context.Context) ([]DetachedPartition, error) { return h.detached, nil }

func (h *fixedHot) ScanSQL(req HotScan) string {
	var parts []string
	if !req.From.IsZero() {
		parts = append(parts, `"from" >= `+req.From.UTC().Format(time.RFC3339))
	}
	if !req.To.IsZero() {
		parts = append(parts, `"from" < `+req.To.UTC().Format(time.RFC3339))
	}
	keys := make([]string, 0, len(req.Eq))
	for k := range req.Eq {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+" = "+sqltext.String(req.Eq[k]))
	}
	if req.MaxVersion != nil {
		parts = append(parts, fmt.Sprintf("version <= %d", *req.MaxVersion))
	}
	if req.RecordedAtMax != nil {
		parts = append(parts, "recorded_at <= "+req.RecordedAtMax.UTC().Format(time.RFC3339))
	}
	return "scan " + req.Table + " where " + strings.Join(parts, " and ")
}

func (h *fixedHot) ScanQuery(req HotScan) (string, error) { return h.ScanSQL(req), nil }

// PartialsQuery names what the hot tier would compute: the partials, over
// each scan's rows, resolved scan by scan or not.
func (h *fixedHot) PartialsQuery(scans []HotScan, partials []Partial, resolved bool) (string, error) {
	cols := make([]string, len(partials))
	for i, p := range partials {
		cols[i] = strings.TrimSpace(p.Kind + " " + p.Column)
	}
	rows := make([]string, len(scans))
	for i, sc := range scans {
		rows[i] = h.ScanSQL(sc)
		if resolved {
			rows[i] = "resolved(" + rows[i] + ")"
		}
	}
	return "partials " + strings.Join(cols, ", ") + " of " + strings.Join(rows, " ∪ "), nil
}

func (h *fixedHot) TextRows(context.Context, string) ([][]*string, error) {
	return nil, fmt.Errorf("fixed hot tier: not readable")
}
