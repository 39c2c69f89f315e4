package pgwire_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestPGWireProbeServer serves the fixture at $SERVE_PROBE_ADDR (user admin,
// password s3cret) until the test binary's deadline, so a client that CI does
// not have (the JDBC probe in testdata/jdbc) can be run against real data by
// hand. Skipped unless the variable is set.
func TestPGWireProbeServer(t *testing.T) {
	addr := os.Getenv("SERVE_PROBE_ADDR")
	if addr == "" {
		t.Skip("set SERVE_PROBE_ADDR=127.0.0.1:5433 to serve the fixture to a client run by hand")
	}
	f := servetest.New(t)
	_, got := f.ListenPG(t, f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"}), addr)
	t.Logf("serving the fixture at %s (user admin, password s3cret) until the test deadline", got)
	hold := 10 * time.Minute
	if d, ok := t.Deadline(); ok {
		hold = time.Until(d) - 30*time.Second
	}
	time.Sleep(hold)
}

// clientStatement is one statement of a captured corpus (testdata/jdbc/statements.sql,
// testdata/grafana_queries.sql).
type clientStatement struct {
	name, call string
	paramOIDs  []uint32
	params     [][]byte
	fetch      uint32 // Execute's row limit, 0 for all rows
	sql        string
}

func loadStatements(t *testing.T, path string) []clientStatement {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []clientStatement
	var cur *clientStatement
	var body []string
	flush := func() {
		if cur != nil {
			cur.sql = strings.TrimRight(strings.Join(body, "\n"), "\n")
			out = append(out, *cur)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "-- name: "); ok {
			flush()
			cur, body = &clientStatement{name: name}, nil
			continue
		}
		if cur == nil {
			continue
		}
		if len(body) == 0 {
			if v, ok := strings.CutPrefix(line, "-- call: "); ok {
				cur.call = v
				continue
			}
			if _, ok := strings.CutPrefix(line, "-- macro: "); ok {
				continue
			}
			if v, ok := strings.CutPrefix(line, "-- fetch: "); ok {
				n, err := strconv.Atoi(v)
				require.NoError(t, err, "%s: fetch", cur.name)
				cur.fetch = uint32(n)
				continue
			}
			if v, ok := strings.CutPrefix(line, "-- params: "); ok {
				for _, p := range strings.Split(v, ", ") {
					oid, val, _ := strings.Cut(p, ":")
					o, err := strconv.Atoi(oid)
					require.NoError(t, err, "%s: params", cur.name)
					cur.paramOIDs = append(cur.paramOIDs, uint32(o))
					cur.params = append(cur.params, []byte(val))
				}
				continue
			}
		}
		body = append(body, line)
	}
	require.NoError(t, sc.Err())
	flush()
	require.NotEmpty(t, out, path)
	return out
}

// replayResult is a statement's answer, values decoded by type oid.
type replayResult struct {
	tag       string
	cols      []string
	oids      []uint32
	rows      [][]any
	suspended int // PortalSuspended answers (Execute with a row limit)
	err       error
}

func (r *replayResult) column(t *testing.T, name string) []any {
	t.Helper()
	for i, c := range r.cols {
		if strings.EqualFold(c, name) { // PostgreSQL folds unquoted aliases, DuckDB keeps them: JDBC compares either way
			out := make([]any, len(r.rows))
			for j, row := range r.rows {
				out[j] = row[i]
			}
			return out
		}
	}
	t.Fatalf("no column %q in %v", name, r.cols)
	return nil
}

func (r *replayResult) strings(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, v := range r.column(t, name) {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

var typeMap = pgtype.NewMap()

// decodeValue decodes one value as a client does: by the column's type oid
// and format; numbers become int64, float64 or decimal.
func decodeValue(t *testing.T, oid uint32, format int16, raw []byte) any {
	t.Helper()
	if raw == nil {
		return nil
	}
	typ, ok := typeMap.TypeForOID(oid)
	if !ok {
		return string(raw)
	}
	v, err := typ.Codec.DecodeValue(typeMap, oid, format, raw)
	require.NoError(t, err, "decode oid %d format %d %q", oid, format, raw)
	switch x := v.(type) {
	case pgtype.Numeric:
		b, err := x.MarshalJSON()
		require.NoError(t, err)
		d, err := decimal.NewFromString(strings.Trim(string(b), `"`))
		require.NoError(t, err)
		return d
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

// readResult reads one statement's answer. (pgconn's ResultReader.Read keeps
// the row description only when there are rows; an empty answer's columns
// are part of what is checked.)
func readResult(t *testing.T, rr *pgconn.ResultReader) *replayResult {
	t.Helper()
	out := &replayResult{}
	var fields []pgconn.FieldDescription
	for rr.NextRow() {
		fields = rr.FieldDescriptions()
		row := make([]any, len(fields))
		for i, v := range rr.Values() {
			row[i] = decodeValue(t, fields[i].DataTypeOID, fields[i].Format, v)
		}
		out.rows = append(out.rows, row)
	}
	tag, err := rr.Close()
	out.tag, out.err = tag.String(), err
	for _, fd := range rr.FieldDescriptions() {
		out.cols = append(out.cols, fd.Name)
		out.oids = append(out.oids, fd.DataTypeOID)
	}
	return out
}

// replayExtended sends a statement the way JDBC does: Parse with the bound
// parameters' types, Bind, Describe, Execute, Sync — as an unnamed statement
// with text results (prepareThreshold=0, and the first executions by
// default), or as a named one with binary results (from the 5th execution).
func replayExtended(t *testing.T, conn *pgconn.PgConn, st clientStatement, named string) *replayResult {
	t.Helper()
	ctx := context.Background()
	if st.fetch > 0 {
		return replayFetch(t, conn, st)
	}
	formats := make([]int16, len(st.params)) // JDBC binds its parameters as text
	if named == "" {
		return readResult(t, conn.ExecParams(ctx, st.sql, st.params, st.paramOIDs, formats, nil))
	}
	if _, err := conn.Prepare(ctx, named, st.sql, st.paramOIDs); err != nil {
		return &replayResult{err: err}
	}
	defer func() { require.NoError(t, conn.Deallocate(ctx, named)) }()
	return readResult(t, conn.ExecPrepared(ctx, named, st.params, formats, []int16{pgtype.BinaryFormatCode}))
}

// replayFetch runs a statement through a named portal, fetch rows at a time,
// as JDBC does for setFetchSize inside a transaction: Parse, Bind C_1,
// Describe, then Execute C_1 with a row limit and Sync until it completes.
func replayFetch(t *testing.T, conn *pgconn.PgConn, st clientStatement) *replayResult {
	t.Helper()
	fe := conn.Frontend()
	out := &replayResult{}
	var fields []pgproto3.FieldDescription
	send := func(msgs ...pgproto3.FrontendMessage) {
		for _, m := range msgs {
			fe.Send(m)
		}
		require.NoError(t, fe.Flush())
	}
	// receive reads up to ReadyForQuery; it reports whether the portal completed.
	receive := func() bool {
		done := false
		batch := 0
		for {
			msg, err := fe.Receive()
			require.NoError(t, err)
			switch m := msg.(type) {
			case *pgproto3.RowDescription:
				fields = append([]pgproto3.FieldDescription(nil), m.Fields...)
				for _, fd := range fields {
					out.cols = append(out.cols, string(fd.Name))
					out.oids = append(out.oids, fd.DataTypeOID)
				}
			case *pgproto3.DataRow:
				batch++
				require.LessOrEqual(t, batch, int(st.fetch), "more rows than the Execute limit")
				row := make([]any, len(m.Values))
				for i, v := range m.Values {
					row[i] = decodeValue(t, fields[i].DataTypeOID, fields[i].Format, v)
				}
				out.rows = append(out.rows, row)
			case *pgproto3.PortalSuspended:
				out.suspended++
			case *pgproto3.CommandComplete:
				out.tag, done = string(m.CommandTag), true
			case *pgproto3.ErrorResponse:
				out.err, done = errors.New(m.Message), true
			case *pgproto3.ReadyForQuery:
				return done
			}
		}
	}
	send(&pgproto3.Parse{Query: st.sql, ParameterOIDs: st.paramOIDs},
		&pgproto3.Bind{DestinationPortal: "C_1", Parameters: st.params},
		&pgproto3.Describe{ObjectType: 'P', Name: "C_1"},
		&pgproto3.Execute{Portal: "C_1", MaxRows: st.fetch}, &pgproto3.Sync{})
	for !receive() {
		send(&pgproto3.Execute{Portal: "C_1", MaxRows: st.fetch}, &pgproto3.Sync{})
	}
	send(&pgproto3.Close{ObjectType: 'P', Name: "C_1"}, &pgproto3.Sync{})
	receive()
	return out
}

// replaySimple sends a statement as Grafana does: the simple query protocol
// (pgx PgConn.Exec; lib/pq's Query without arguments), every result read.
func replaySimple(t *testing.T, conn *pgconn.PgConn, st clientStatement) *replayResult {
	t.Helper()
	mrr := conn.Exec(context.Background(), st.sql)
	var results []*replayResult
	for mrr.NextResult() {
		results = append(results, readResult(t, mrr.ResultReader()))
	}
	if err := mrr.Close(); err != nil {
		return &replayResult{err: err}
	}
	if len(results) == 0 {
		return &replayResult{}
	}
	require.Len(t, results, 1, "%s: one statement, one result", st.name)
	return results[0]
}

// The Grafana corpus's time range ($__timeFilter, $__timeFrom(), $__timeTo()).
var (
	grafanaFrom = time.Date(2025, 10, 23, 0, 0, 0, 0, time.UTC)
	grafanaTo   = time.Date(2025, 10, 26, 12, 0, 0, 0, time.UTC)
)

// TestPGWireClientStatements replays every statement the PostgreSQL JDBC
// driver and Grafana's PostgreSQL data source send (captured or rebuilt from
// their source, see the corpus files) in the protocol mode each uses, and
// checks each answer: the table list holds readings, "from" is a timestamp
// with time zone, the row counts and sums are the oracle's. CI needs neither
// Java nor Grafana.
func TestPGWireClientStatements(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	_, addr := f.StartPG(t, f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"}))
	all := time.Time{}

	desc, err := f.Store.Engine.Describe(ctx, `SELECT * FROM readings`)
	require.NoError(t, err)
	readingsCols := desc.Columns
	descV, err := f.Store.Engine.Describe(ctx, `SELECT * FROM readings_versions`)
	require.NoError(t, err)
	res, err := f.Store.Engine.Query(ctx, `SELECT min(malo_id) FROM readings`)
	require.NoError(t, err)
	minMalo := res.Rows[0][0].(string)
	winners := f.Oracle.Winners(grafanaFrom, grafanaTo.Add(time.Microsecond)) // BETWEEN includes its upper end
	// The range's readings in time order, as ORDER BY "from" has them.
	var froms []time.Time
	for _, w := range winners {
		froms = append(froms, w.From)
	}
	sort.Slice(froms, func(i, j int) bool { return froms[i].Before(froms[j]) })
	require.NotEmpty(t, froms)
	require.True(t, froms[0].Before(f.Cut) && froms[len(froms)-1].After(f.Cut), "the range spans both tiers")

	noError := func(t *testing.T, r *replayResult) {}
	tag := func(want string) func(*testing.T, *replayResult) {
		return func(t *testing.T, r *replayResult) { require.Equal(t, want, r.tag) }
	}
	empty := func(cols ...string) func(*testing.T, *replayResult) {
		return func(t *testing.T, r *replayResult) {
			require.Empty(t, r.rows)
			require.Len(t, r.cols, len(cols))
			for i, c := range cols {
				require.True(t, strings.EqualFold(c, r.cols[i]), "column %d: %s, want %s", i, r.cols[i], c)
			}
		}
	}
	tablesListed := func(t *testing.T, r *replayResult) {
		require.Equal(t, []string{"public", "public"}, r.strings(t, "TABLE_SCHEM"))
		require.Equal(t, []string{"readings", "readings_versions"}, r.strings(t, "TABLE_NAME"))
		require.Equal(t, []string{"TABLE", "TABLE"}, r.strings(t, "TABLE_TYPE"))
		for _, remark := range r.strings(t, "REMARKS") {
			require.Contains(t, remark, "read-only")
		}
	}
	// Grafana's column list: quote_ident'ed names and PostgreSQL's data_type,
	// which decides what the editor offers a column as (time, number, text).
	grafanaColumns := func(t *testing.T, r *replayResult) {
		types := map[string]string{}
		for i, c := range r.strings(t, "column") {
			types[c] = r.strings(t, "type")[i]
		}
		require.Len(t, types, len(readingsCols))
		require.Equal(t, "timestamp with time zone", types[`"from"`], "%v", types)
		require.Equal(t, "timestamp with time zone", types[`"to"`])
		require.Equal(t, "numeric", types["value"])
		require.Equal(t, "numeric", types["version"])
		require.Equal(t, "text", types["malo_id"])
		require.Equal(t, "date", types["balancing_day"])
	}
	grafanaTables := func(t *testing.T, r *replayResult) {
		require.Equal(t, []string{"readings", "readings_versions"}, r.strings(t, "table"))
	}

	expect := map[string]func(*testing.T, *replayResult){
		// JDBC
		"connect/set-extra-float-digits": tag("SET"),
		"connect/set-application-name":   tag("SET"),
		"getSchemas": func(t *testing.T, r *replayResult) {
			require.Equal(t, []string{"information_schema", "pg_catalog", "public"}, r.strings(t, "TABLE_SCHEM"))
		},
		"getTables/all": tablesListed,
		"getTables/readings": func(t *testing.T, r *replayResult) {
			require.Equal(t, []string{"readings"}, r.strings(t, "TABLE_NAME"))
			require.Equal(t, []string{"TABLE"}, r.strings(t, "TABLE_TYPE"))
		},
		"getColumns/readings": func(t *testing.T, r *replayResult) {
			require.Equal(t, readingsCols, r.strings(t, "attname"))
			byName := map[string][]any{}
			for _, row := range r.rows {
				byName[fmt.Sprint(row[2])] = row
			}
			typid, typmod, notnull := 3, 5, 4
			require.EqualValues(t, 1184, byName["from"][typid])
			require.EqualValues(t, 1700, byName["value"][typid])
			require.EqualValues(t, 18<<16|6+4, byName["value"][typmod], "numeric(18,6)")
			require.EqualValues(t, 1082, byName["balancing_day"][typid])
			require.EqualValues(t, 25, byName["malo_id"][typid])
			require.Equal(t, true, byName["malo_id"][notnull])
			require.Equal(t, false, byName["melo_id"][notnull])
			for i, n := range r.column(t, "attnum") {
				require.EqualValues(t, i+1, n)
			}
			require.Equal(t, []any{"public"}, uniq(r.column(t, "nspname")))
			require.Equal(t, []any{"readings"}, uniq(r.column(t, "relname")))
		},
		"getColumns/readings_versions-escaped": func(t *testing.T, r *replayResult) {
			require.Equal(t, descV.Columns, r.strings(t, "attname"))
			require.Equal(t, []any{"readings_versions"}, uniq(r.column(t, "relname")))
		},
		"getPrimaryKeys/readings": empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME"),
		"getImportedKeys/max-index-keys": func(t *testing.T, r *replayResult) {
			require.Equal(t, []string{"32"}, r.strings(t, "setting"))
		},
		"getImportedKeys/readings": empty("PKTABLE_CAT", "PKTABLE_SCHEM", "PKTABLE_NAME", "PKCOLUMN_NAME", "FKTABLE_CAT",
			"FKTABLE_SCHEM", "FKTABLE_NAME", "FKCOLUMN_NAME", "KEY_SEQ", "UPDATE_RULE", "DELETE_RULE", "FK_NAME", "PK_NAME", "DEFERRABILITY"),
		"getIndexInfo/readings": empty("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "NON_UNIQUE", "INDEX_QUALIFIER", "INDEX_NAME",
			"TYPE", "ORDINAL_POSITION", "COLUMN_NAME", "ASC_OR_DESC", "CARDINALITY", "PAGES", "FILTER_CONDITION"),
		"getTypeInfo/types": func(t *testing.T, r *replayResult) {
			oids := map[string]any{}
			for i, n := range r.strings(t, "typname") {
				oids[n] = r.column(t, "oid")[i]
			}
			for name, oid := range map[string]int64{"numeric": 1700, "timestamptz": 1184, "date": 1082, "text": 25, "int4": 23, "int8": 20, "bool": 16, "_int4": 1007} {
				require.EqualValues(t, oid, oids[name], name)
			}
		},
		"getTypeInfo/arrays": func(t *testing.T, r *replayResult) {
			isArray := map[string]any{}
			for i, n := range r.strings(t, "typname") {
				isArray[n] = r.column(t, "is_array")[i]
			}
			require.Equal(t, true, isArray["_timestamptz"])
			require.Equal(t, false, isArray["timestamptz"])
			oids := r.column(t, "oid")
			require.True(t, sort.SliceIsSorted(oids, func(i, j int) bool { return oids[i].(int64) > oids[j].(int64) }), "ORDER BY oid DESC")
		},
		"getSchema": func(t *testing.T, r *replayResult) {
			require.Equal(t, [][]any{{"public"}}, r.rows)
		},
		"query/min-malo": func(t *testing.T, r *replayResult) {
			require.Equal(t, [][]any{{minMalo}}, r.rows)
		},
		"query/prepared": func(t *testing.T, r *replayResult) {
			require.Equal(t, []uint32{25, 1184, 1082, 1700, 1700}, r.oids)
			want, err := f.Store.Engine.Query(ctx, `SELECT malo_id, "from", balancing_day, value, version FROM readings
				WHERE malo_id = '20908038317' ORDER BY "from" LIMIT 3`)
			require.NoError(t, err)
			require.Len(t, r.rows, 3, "the captured malo_id was the fixture's smallest, now %s", minMalo)
			for i, row := range r.rows {
				require.Equal(t, "20908038317", row[0])
				require.True(t, want.Rows[i][1].(time.Time).Equal(row[1].(time.Time)), "from %v vs %v", row[1], want.Rows[i][1])
				require.True(t, want.Rows[i][3].(decimal.Decimal).Equal(row[3].(decimal.Decimal)), "value %v vs %v", row[3], want.Rows[i][3])
			}
		},
		"fetch/begin": tag("BEGIN"),
		"fetch/rows": func(t *testing.T, r *replayResult) {
			n := f.Oracle.RowCount(all, all)
			require.Len(t, r.rows, n)
			require.Equal(t, n/100, r.suspended, "one PortalSuspended per full batch of 100")
			require.Equal(t, fmt.Sprintf("SELECT %d", n), r.tag)
			for i := 1; i < len(r.rows); i++ {
				a, b := r.rows[i-1], r.rows[i]
				require.True(t, a[0].(string) < b[0].(string) || a[0] == b[0] && !b[1].(time.Time).Before(a[1].(time.Time)), "ORDER BY malo_id, from")
			}
		},
		"fetch/count": func(t *testing.T, r *replayResult) {
			require.Equal(t, [][]any{{int64(f.Oracle.RowCount(all, all))}}, r.rows)
		},
		"fetch/commit": tag("COMMIT"),
		// Grafana
		"health/pgx":    noError,
		"health/lib-pq": noError,
		"settings/version": func(t *testing.T, r *replayResult) {
			require.Len(t, r.rows, 1)
			v, err := strconv.ParseFloat(fmt.Sprint(r.rows[0][0]), 64)
			require.NoError(t, err)
			require.Equal(t, 1500.0, v, "Grafana reads the major version times 100")
		},
		"settings/timescaledb":     empty("extversion"),
		"editor/schemas":           func(t *testing.T, r *replayResult) { require.Equal(t, []string{"public"}, r.strings(t, "name")) },
		"editor/tables":            grafanaTables,
		"editor/tables-of-schema":  grafanaTables,
		"editor/columns":           grafanaColumns,
		"editor/columns-qualified": grafanaColumns,
		"builder/table": func(t *testing.T, r *replayResult) {
			require.Len(t, r.rows, 50)
			require.Equal(t, []string{"malo_id", "from", "value"}, r.cols)
			require.Equal(t, []uint32{25, 1184, 1700}, r.oids)
		},
		"builder/time-series": func(t *testing.T, r *replayResult) {
			want := map[float64]decimal.Decimal{}
			for _, w := range winners {
				day := math.Floor(float64(w.From.Unix())/86400) * 86400
				want[day] = want[day].Add(w.Value)
			}
			got := map[float64]decimal.Decimal{}
			for i, tm := range r.column(t, "time") {
				got[toFloat(t, tm)] = r.column(t, "value")[i].(decimal.Decimal)
			}
			require.Len(t, got, len(want))
			for day, sum := range want {
				require.True(t, sum.Equal(got[day]), "day %v: %s, oracle %s", time.Unix(int64(day), 0).UTC(), got[day], sum)
			}
		},
		"code/time-series-metric": func(t *testing.T, r *replayResult) {
			type key struct {
				hour float64
				malo string
			}
			sums, counts := map[key]decimal.Decimal{}, map[key]int64{}
			for _, w := range winners {
				k := key{math.Floor(float64(w.From.Unix())/3600) * 3600, w.MaloID}
				sums[k] = sums[k].Add(w.Value)
				counts[k]++
			}
			require.Equal(t, []string{"time", "metric", "value"}, r.cols)
			require.Len(t, r.rows, len(sums))
			prev := math.Inf(-1)
			for _, row := range r.rows {
				k := key{toFloat(t, row[0]), row[1].(string)}
				require.GreaterOrEqual(t, k.hour, prev, "ORDER BY time")
				prev = k.hour
				avg := sums[k].Div(decimal.NewFromInt(counts[k])).InexactFloat64() // DuckDB's avg of a decimal is a double
				require.InDelta(t, avg, toFloat(t, row[2]), 1e-9, "%v", k)
			}
		},
		"code/time": func(t *testing.T, r *replayResult) {
			require.Equal(t, []string{"time", "value", "quality"}, r.cols)
			require.Equal(t, uint32(1184), r.oids[0], "Grafana takes a timestamptz column named time as the time")
			require.Len(t, r.rows, 5)
			for i, row := range r.rows {
				require.True(t, froms[i].Equal(row[0].(time.Time)), "row %d: %v, oracle %v", i, row[0], froms[i])
			}
		},
		"code/time-epoch": func(t *testing.T, r *replayResult) {
			require.Len(t, r.rows, 5)
			for i, row := range r.rows {
				require.Equal(t, float64(froms[i].Unix()), toFloat(t, row[0]), "row %d", i)
			}
		},
	}
	refused := map[string]string{"write-refused": "42501"}

	check := func(t *testing.T, st clientStatement, r *replayResult) {
		t.Helper()
		if code, ok := refused[st.name]; ok {
			require.Error(t, r.err)
			require.Equal(t, code, servetest.PGCode(r.err), "%v", r.err)
			return
		}
		require.NoError(t, r.err, "%s (%s)", st.name, st.call)
		e, ok := expect[st.name]
		require.True(t, ok, "no expectation for %q: add one", st.name)
		e(t, r)
	}

	jdbc := loadStatements(t, "testdata/jdbc/statements.sql")
	// JDBC: one connection, the statements in the order the driver sent them,
	// as unnamed statements, then again as named ones with binary results.
	for _, named := range []bool{false, true} {
		c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeExec, nil).PgConn()
		for i, st := range jdbc {
			name := ""
			if named {
				name = fmt.Sprintf("S_%d", i+1)
			}
			t.Run(fmt.Sprintf("jdbc/%s/named=%v", st.name, named), func(t *testing.T) {
				check(t, st, replayExtended(t, c, st, name))
			})
		}
	}

	grafana := loadStatements(t, "testdata/grafana_queries.sql")
	c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeSimpleProtocol, nil).PgConn()
	for _, st := range grafana {
		if strings.Contains(st.sql, "BETWEEN") {
			require.Contains(t, st.sql, "'"+grafanaFrom.Format(time.RFC3339Nano)+"' AND '"+grafanaTo.Format(time.RFC3339Nano)+"'", st.name)
		}
		t.Run("grafana/"+st.name, func(t *testing.T) { check(t, st, replaySimple(t, c, st)) })
	}
	require.Len(t, expect, len(jdbc)+len(grafana)-len(refused), "every expectation belongs to a captured statement")
}

func uniq(vs []any) []any {
	var out []any
	seen := map[any]bool{}
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func toFloat(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case decimal.Decimal:
		return x.InexactFloat64()
	}
	t.Fatalf("not a number: %T %v", v, v)
	return 0
}
