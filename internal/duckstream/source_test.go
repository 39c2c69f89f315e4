package duckstream

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/sqltext"
)

const sourceQuery = `SELECT i, 'DE' || i::VARCHAR AS malo, TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_minutes(i) AS "from",
	(i / 1000)::DECIMAL(18,6) AS value, i::DECIMAL(20,0) AS version, DATE '2025-01-01' + (i % 30)::INT AS day
	FROM range(100000) t(i)`

var sourceColumns = []string{"i", "malo", "from", "value", "version", "day"}

// sourceFunction is fed(query): the columns of sourceQuery, read from src
// with only the columns the statement reads.
type sourceFunction struct {
	src *Statements
	ctx context.Context
}

type sourceState struct {
	f sourceFunction
	q string
	s *Source
}

func (st *sourceState) ColumnInfos() []duckdb.ColumnInfo {
	types := []duckdb.Type{duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR, duckdb.TYPE_TIMESTAMP_TZ}
	out := make([]duckdb.ColumnInfo, len(sourceColumns))
	for i, c := range sourceColumns {
		var ti duckdb.TypeInfo
		var err error
		switch {
		case i < 3:
			ti, err = duckdb.NewTypeInfo(types[i])
		case c == "value":
			ti, err = duckdb.NewDecimalInfo(18, 6)
		case c == "version":
			ti, err = duckdb.NewDecimalInfo(20, 0)
		default:
			ti, err = duckdb.NewTypeInfo(duckdb.TYPE_DATE)
		}
		if err != nil {
			panic(err)
		}
		out[i] = duckdb.ColumnInfo{Name: c, T: ti}
	}
	return out
}
func (st *sourceState) Cardinality() *duckdb.CardinalityInfo { return nil }
func (st *sourceState) Init()                                {}
func (st *sourceState) FillChunk(c duckdb.DataChunk) error {
	out, proj, err := OutputChunk(&c)
	if err != nil {
		return err
	}
	if st.s == nil {
		cols := make([]string, c.ColumnCount())
		for src, at := range proj {
			if at >= 0 {
				cols[at] = `"` + sourceColumns[src] + `"`
			}
		}
		if st.s, err = st.f.src.Open(st.f.ctx, "SELECT "+strings.Join(cols, ", ")+" FROM ("+st.q+")", true); err != nil {
			return err
		}
	}
	_, err = st.s.Fill(out)
	return err
}

func (st *sourceState) close() {
	if st.s != nil {
		st.s.Close()
	}
}

// sourceDB is a DuckDB database that opens no file, with fed(query) reading
// query on src; close ends the sources the statements opened.
func sourceDB(t *testing.T, ctx context.Context, src *sql.DB) (*sql.Conn, func()) {
	t.Helper()
	kept := NewStatements(src, 8)
	t.Cleanup(func() { kept.Close() })
	return sourceDBOf(t, ctx, kept)
}

// sourceDBOf is sourceDB with fed(query) run on kept's database.
func sourceDBOf(t *testing.T, ctx context.Context, kept *Statements) (*sql.Conn, func()) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	var states []*sourceState
	f := sourceFunction{src: kept, ctx: ctx}
	vc, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	require.NoError(t, err)
	require.NoError(t, duckdb.RegisterTableUDF(conn, "fed", duckdb.ChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{vc}},
		BindArguments: func(named map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
			st := &sourceState{f: f, q: args[0].(string)}
			states = append(states, st)
			return st, nil
		},
	}))
	for _, s := range []string{"SET GLOBAL autoinstall_known_extensions = false", "SET GLOBAL autoload_known_extensions = false",
		"SET GLOBAL enable_external_access = false", "SET GLOBAL lock_configuration = true"} {
		_, err := conn.ExecContext(ctx, s)
		require.NoError(t, err)
	}
	return conn, func() {
		for _, st := range states {
			st.close()
		}
		states = nil
	}
}

// TestSourceRowsAsTheQueryHasThem: a database that opens no file reads a
// source's rows — every column, or only those a statement reads — with the
// values and types the source database computes.
func TestSourceRowsAsTheQueryHasThem(t *testing.T) {
	ctx := context.Background()
	src, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer src.Close()
	conn, done := sourceDB(t, ctx, src)
	defer conn.Close()
	fed := "fed(" + sqltext.String(sourceQuery) + ")"
	for _, q := range []string{
		`SELECT count(*)::VARCHAR FROM %s`,
		`SELECT sum(value)::VARCHAR FROM %s`,
		`SELECT (sum(i), max(version), max(day))::VARCHAR FROM %s`,
		`SELECT (count(*), max("from"), max(malo), sum(value))::VARCHAR FROM %s WHERE day = DATE '2025-01-07'`,
		`SELECT string_agg(malo || value::VARCHAR, ',' ORDER BY i)::VARCHAR FROM (SELECT * FROM %s LIMIT 5000)`,
		`SELECT max(i)::VARCHAR FROM %s, (SELECT 1) x`,
	} {
		var want, got string
		require.NoError(t, src.QueryRowContext(ctx, fmt.Sprintf(q, "("+sourceQuery+")")).Scan(&want), q)
		require.NoError(t, conn.QueryRowContext(ctx, fmt.Sprintf(q, fed)).Scan(&got), q)
		done()
		require.Equal(t, want, got, q)
	}
	_, err = conn.ExecContext(ctx, `SELECT count(*) FROM read_parquet('/tmp/x.parquet')`)
	require.ErrorContains(t, err, "disabled by configuration")
}

// TestSourceFailureReachesTheReader: the source query failing after many rows
// fails the reading statement with the source's error; a cancelled context
// stops both.
func TestSourceFailureReachesTheReader(t *testing.T) {
	ctx := context.Background()
	// One thread in the source database: with more, DuckDB 1.5 can report the
	// failure as its interrupt of the other threads (ErrCauseLost), and this
	// test is about the cause reaching the reader.
	src, err := sql.Open("duckdb", "?threads=1")
	require.NoError(t, err)
	defer src.Close()
	conn, done := sourceDB(t, ctx, src)
	defer conn.Close()
	defer done()
	bad := `SELECT CASE WHEN i < 5000000 THEN i ELSE error('row ' || i::VARCHAR || ' is bad') END AS i, '' AS malo, NULL::TIMESTAMPTZ AS "from", NULL::DECIMAL(18,6) AS value, NULL::DECIMAL(20,0) AS version, NULL::DATE AS day FROM range(10000000) t(i)`
	var n int64
	err = conn.QueryRowContext(ctx, "SELECT sum(i) FROM fed("+sqltext.String(bad)+")").Scan(&n)
	require.ErrorContains(t, err, "is bad")

	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	long := `SELECT i, '' AS malo, NULL::TIMESTAMPTZ AS "from", NULL::DECIMAL(18,6) AS value, NULL::DECIMAL(20,0) AS version, NULL::DATE AS day FROM range(100000000000) t(i)`
	err = conn.QueryRowContext(cctx, "SELECT sum(i) FROM fed("+sqltext.String(long)+")").Scan(&n)
	require.Error(t, err)
}
