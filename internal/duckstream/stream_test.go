package duckstream

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// TestDuckDBHandles: the unexported duckdb-go fields this package reads
// (handles.go) are still there, with the types it reads them
// as, and hold live handles. If this fails after a duckdb-go upgrade, streaming
// is broken: find the connection and prepared-statement handles in the new
// version (or a public way to stream) before anything else.
func TestDuckDBHandles(t *testing.T) {
	ctx := context.Background()
	for typ, fields := range map[reflect.Type]map[string]reflect.Type{
		reflect.TypeFor[duckdb.Conn]():               {"conn": reflect.TypeFor[bindings.Connection]()},
		reflect.TypeFor[duckdb.Stmt]():               {"preparedStmt": reflect.TypeFor[*bindings.PreparedStatement]()},
		reflect.TypeFor[duckdb.DataChunk]():          {"chunk": reflect.TypeFor[bindings.DataChunk](), "projection": reflect.TypeFor[[]int]()},
		reflect.TypeFor[duckdb.ChunkIteratorState](): {"r": reflect.TypeFor[duckdb.Row]()},
		reflect.TypeFor[duckdb.Row]():                {"rowIdx": reflect.TypeFor[bindings.IdxT]()},
	} {
		for name, want := range fields {
			f, ok := typ.FieldByName(name)
			require.True(t, ok, "duckdb-go %s has no field %s any more: engine/duckstream.go cannot stream", typ, name)
			require.Equal(t, want, f.Type, "duckdb-go %s.%s changed type: engine/duckstream.go cannot stream", typ, name)
		}
	}

	conn := duckConn(t)
	require.NoError(t, conn.Raw(func(dc any) error {
		d := dc.(*duckdb.Conn)
		raw, err := Connection(d)
		require.NoError(t, err)
		require.NotNil(t, raw.Ptr)
		st, err := d.PrepareContext(ctx, "SELECT 40 + ?")
		require.NoError(t, err)
		defer st.Close()
		ps, err := duckPrepared(st.(*duckdb.Stmt))
		require.NoError(t, err)
		require.EqualValues(t, 1, bindings.NParams(ps), "the handle read is the statement duckdb-go prepared")
		var own bindings.PreparedStatement
		require.Equal(t, bindings.StateSuccess, bindings.Prepare(raw, "SELECT 1", &own), "the handle read is a live connection")
		bindings.DestroyPrepare(&own)
		return nil
	}))

	_, err := unexportedField[bindings.Connection](&struct{ conn int }{}, "conn")
	require.ErrorContains(t, err, "is int, want")
	_, err = unexportedField[bindings.Connection](&struct{}{}, "conn")
	require.ErrorContains(t, err, "has no field conn")
}

// decodeMatrix is one expression per DuckDB type duckdb-go decodes, nested ones
// included; every tenth row of every column is NULL (an expression starting
// with CASE places its own NULLs: DuckDB has no CASE over ARRAY).
var decodeMatrix = []string{
	`i % 2 = 0`, `(i % 100)::TINYINT`, `(i % 1000)::SMALLINT`, `i::INTEGER`, `i::BIGINT - 2500`,
	`(i % 200)::UTINYINT`, `(i % 60000)::USMALLINT`, `i::UINTEGER`, `i::UBIGINT * 3000000000000`,
	`(i / 3)::FLOAT`, `i / 7`,
	`TIMESTAMP '2024-01-01' + to_seconds(i * 1000)`, `TIMESTAMPTZ '2024-03-31 00:30:00+00' + to_minutes(i)`,
	`(TIMESTAMP '1960-01-01' + to_seconds(i))::TIMESTAMP_S`, `(TIMESTAMP '2024-01-01' + to_microseconds(i * 1234))::TIMESTAMP_MS`,
	`(TIMESTAMP '2024-01-01' + to_microseconds(i * 1234))::TIMESTAMP_NS`,
	`DATE '1900-01-01' + (i * 17)::INTEGER`, `'infinity'::DATE`, `TIME '00:00:00' + to_microseconds(i * 987654)`,
	`('12:34:56.789+0' || (i % 9) || ':30')::TIMETZ`, `to_days(i) + to_microseconds(i) + to_months(i % 13)`,
	`(i - 2500)::HUGEINT * 10000000000000000000000`, `i::UHUGEINT * 100000000000000000000000`,
	`((i - 2500)::VARCHAR || '000000000000000000000000000000')::BIGNUM`,
	`'s' || i`, `repeat('long string ', i % 4) || i`, `('blob' || i)::BLOB`, `('1' || (i % 2) || '01')::BIT`,
	`json_object('k', i, 'l', [i, NULL])`, `'[1, "a", null]'::JSON`,
	`(i / 100)::DECIMAL(4,2)`, `(i / 1000)::DECIMAL(9,3)`, `(i - 2500) / 1000000::DECIMAL(18,6)`,
	`(i::HUGEINT * 1000000000000000000)::DECIMAL(38,10)`,
	`(['a', 'b', 'c'])[i % 3 + 1]::mood`,
	`[i, NULL, i + 1]`, `[[i], []]`, `{'a': i, 'b "x"': 's' || i, 'c': [i]}`,
	`MAP {'k' || (i % 3): i, 'z': NULL}`, `MAP {i: [i]}`, `(CASE WHEN i % 10 = 3 THEN NULL ELSE [i, i * 2] END)::INTEGER[2]`,
	`CASE WHEN i % 2 = 0 THEN union_value(num := i)::UNION(num INTEGER, str VARCHAR) ELSE union_value(str := 's' || i)::UNION(num INTEGER, str VARCHAR) END`,
	`('00000000-0000-0000-0000-' || lpad(i::VARCHAR, 12, '0'))::UUID`, `'ffffffff-0000-4000-8000-00000000000a'::UUID`,
	`NULL`, `[{'x': i, 'y': [1.5]}]`, `{'m': MAP {'k': (i / 10)::DECIMAL(9,1)}}`,
}

// TestDecodeMatchesDuckDBGo: a streamed result scans into the same values, type
// names and scan types as the same result read through duckdb-go, for every
// type, across chunk boundaries.
func TestDecodeMatchesDuckDBGo(t *testing.T) {
	ctx := context.Background()
	conn := duckConn(t)
	_, err := conn.ExecContext(ctx, `CREATE TYPE mood AS ENUM ('a', 'b', 'c')`)
	require.NoError(t, err)
	cols := make([]string, len(decodeMatrix))
	for i, x := range decodeMatrix {
		if !strings.HasPrefix(x, "(CASE") {
			x = "CASE WHEN i % 10 = 3 THEN NULL ELSE " + x + " END"
		}
		cols[i] = fmt.Sprintf("%s AS c%d", x, i)
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM range(5000) t(i) ORDER BY i"

	want := readAll(t, func() (*sql.Rows, error) { return conn.QueryContext(ctx, q) })
	stream, err := Open(conn, DriverDecimals, nil)
	require.NoError(t, err)
	defer stream.Close()
	got := readAll(t, func() (*sql.Rows, error) { return stream.QueryContext(ctx, q) })

	require.Equal(t, want.names, got.names)
	for i := range want.types {
		require.Equal(t, want.types[i], got.types[i], "type name of %s", decodeMatrix[i])
		require.Equal(t, want.scans[i], got.scans[i], "scan type of %s", decodeMatrix[i])
	}
	require.Len(t, got.rows, 5000)
	for r := range want.rows {
		for c := range want.rows[r] {
			require.Equal(t, render(want.rows[r][c]), render(got.rows[r][c]), "row %d, %s", r, decodeMatrix[c])
		}
	}
}

// TestExactDecimals: a stream opened with ExactDecimals hands out each
// top-level DECIMAL — at every storage width, NULL included — as the
// decimal.Decimal engine.Normalize makes of the duckdb.Decimal a stream opened
// with DriverDecimals hands out for it; DECIMALs inside a list stay
// duckdb-go's. One connection serves both, so the choice is the stream's.
func TestExactDecimals(t *testing.T) {
	ctx := context.Background()
	conn := duckConn(t)
	q := `SELECT (i * 99.9)::DECIMAL(4,1), (i * 12345.67 - 3)::DECIMAL(9,2), (i * -999999999999.999999)::DECIMAL(18,6),
		(i * 12345678901234567890.123456)::DECIMAL(38,6), CASE WHEN i = 0 THEN NULL ELSE i::DECIMAL(18,6) END,
		[i::DECIMAL(18,6), -1.5] FROM range(-1, 2) t(i) ORDER BY i`
	open := func(d Decimals) readResult {
		stream, err := Open(conn, d, nil)
		require.NoError(t, err)
		defer stream.Close()
		return readAll(t, func() (*sql.Rows, error) { return stream.QueryContext(ctx, q) })
	}
	driver, exact := open(DriverDecimals), open(ExactDecimals)
	require.Equal(t, driver.types, exact.types)
	require.Equal(t, driver.scans, exact.scans, "the scan types are duckdb-go's either way")
	require.Len(t, exact.rows, 3)
	for r, row := range driver.rows {
		for c, v := range row[:5] {
			if v == nil {
				require.Nil(t, exact.rows[r][c], "row %d, column %d: NULL", r, c)
				continue
			}
			d := v.(duckdb.Decimal)
			got, ok := exact.rows[r][c].(decimal.Decimal)
			require.True(t, ok, "row %d, column %d: %T", r, c, exact.rows[r][c])
			require.Equal(t, -int32(d.Scale), got.Exponent(), "row %d, column %d", r, c)
			require.Zero(t, d.Value.Cmp(got.Coefficient()), "row %d, column %d: %s is not %s", r, c, got.Coefficient(), d.Value)
		}
		require.Equal(t, render(row[5]), render(exact.rows[r][5]), "row %d: a nested DECIMAL", r)
		require.IsType(t, duckdb.Decimal{}, exact.rows[r][5].([]any)[0])
	}
}

// TestStreamArguments: arguments bind as through duckdb-go (a time.Time into a
// TIMESTAMPTZ comparison, a string, a list).
func TestStreamArguments(t *testing.T) {
	ctx := context.Background()
	conn := duckConn(t)
	stream, err := Open(conn, DriverDecimals, nil)
	require.NoError(t, err)
	defer stream.Close()
	q := `SELECT count(*) FILTER (WHERE TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_hours(i) >= $1), $2 || '!', list_sum($3) FROM range(100) t(i)`
	args := []any{time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC), "x", []int64{1, 2, 3}}
	want := readAll(t, func() (*sql.Rows, error) { return conn.QueryContext(ctx, q, args...) })
	got := readAll(t, func() (*sql.Rows, error) { return stream.QueryContext(ctx, q, args...) })
	require.Equal(t, render(want.rows), render(got.rows))
	require.Equal(t, "[[int64(52) string(x!) *big.Int(6)]]", render(got.rows))
}

type readResult struct {
	names, types []string
	scans        []reflect.Type
	rows         [][]any
}

func readAll(t *testing.T, query func() (*sql.Rows, error)) readResult {
	t.Helper()
	rows, err := query()
	require.NoError(t, err)
	defer rows.Close()
	var out readResult
	cts, err := rows.ColumnTypes()
	require.NoError(t, err)
	for _, ct := range cts {
		out.names = append(out.names, ct.Name())
		out.types = append(out.types, ct.DatabaseTypeName())
		out.scans = append(out.scans, ct.ScanType())
	}
	for rows.Next() {
		vals := make([]any, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out.rows = append(out.rows, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

// render spells a scanned value out with its Go types, nested ones included,
// so two values compare equal only if they are the same values of the same types.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case [][]any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + render(x[k])
		}
		return "map{" + strings.Join(parts, " ") + "}"
	case duckdb.OrderedMap:
		keys, vals := x.Keys(), x.Values()
		parts := make([]string, len(keys))
		for i := range keys {
			parts[i] = render(keys[i]) + ":" + render(vals[i])
		}
		return "omap{" + strings.Join(parts, " ") + "}"
	case duckdb.Union:
		return "union{" + x.Tag + ":" + render(x.Value) + "}"
	case duckdb.Decimal:
		return fmt.Sprintf("decimal(%d,%d)%s", x.Width, x.Scale, x.Value)
	case *big.Int:
		return "*big.Int(" + x.String() + ")"
	case time.Time:
		name, off := x.Zone()
		return fmt.Sprintf("time(%s %s %d)", x.Format(time.RFC3339Nano), name, off)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// duckConn is a connection of a fresh in-memory DuckDB database.
func duckConn(t testing.TB) *sql.Conn {
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestStreamExecutionErrors: a statement failing while it runs (not when it
// is prepared) fails through the stream with DuckDB's error — its type and
// message — as through duckdb-go, whose statements DuckDB runs to their
// result itself (executePending).
func TestStreamExecutionErrors(t *testing.T) {
	ctx := context.Background()
	conn := duckConn(t)
	stream, err := Open(conn, DriverDecimals, nil)
	require.NoError(t, err)
	defer stream.Close()
	for _, q := range []string{
		`SELECT error('boom')`,
		`SELECT sum(CASE WHEN i = 2999999 THEN 'x' ELSE i::VARCHAR END::INTEGER) FROM range(3000000) t(i)`,
		`SELECT count(*) FROM range(10) t(i) WHERE i = (SELECT * FROM range(2))`,
	} {
		_, want := conn.QueryContext(ctx, q)
		require.Error(t, want, q)
		var wantDuck *duckdb.Error
		require.ErrorAs(t, want, &wantDuck, q)
		rows, err := stream.QueryContext(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		var got *duckdb.Error
		require.ErrorAs(t, err, &got, q)
		require.Equal(t, wantDuck.Type, got.Type, q)
		require.Equal(t, wantDuck.Msg, got.Msg, q)
	}
}
