package pgwire_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

func TestPGWire(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	users := f.Users(t,
		settings.UserSettings{Name: "admin", Password: "s3cret"},
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"},
	)
	_, addr := f.StartPG(t, users)
	all := time.Time{}

	t.Run("simple protocol", func(t *testing.T) {
		var notices []string
		c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeSimpleProtocol, &notices)
		var n int64
		var sum decimal.Decimal
		var s pgtype.Numeric
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*), sum(value) FROM readings`).Scan(&n, &s))
		require.NoError(t, sum.Scan(mustText(t, s)))
		require.EqualValues(t, f.Oracle.RowCount(all, all), n)
		require.True(t, f.Oracle.Sum(all, all).Equal(sum), "pgwire %s oracle %s", sum, f.Oracle.Sum(all, all))
		require.NotEmpty(t, notices)
		require.Contains(t, notices[len(notices)-1], "watermark "+f.Cut.UTC().Format(time.RFC3339))
		require.Contains(t, notices[len(notices)-1], "tiers cold+hot")
		// Several statements in one simple query.
		_, err := c.Exec(ctx, `SET extra_float_digits = 3; SELECT 1; SELECT 2`)
		require.NoError(t, err)
	})

	t.Run("extended protocol with parameters", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec, pgx.QueryExecModeDescribeExec} {
			c := servetest.PGConnect(t, addr, "admin", "s3cret", mode, nil)
			q := `SELECT count(*) AS n, sum(value) AS s FROM readings WHERE tenant = $1 AND "from" >= $2`
			want, err := f.Store.Engine.Query(ctx, strings.NewReplacer("$1", "'tenant02'", "$2", "TIMESTAMPTZ '"+f.Cut.Add(-24*time.Hour).Format(time.RFC3339)+"'").Replace(q))
			require.NoError(t, err)
			var n int64
			var s pgtype.Numeric
			require.NoError(t, c.QueryRow(ctx, q, "tenant02", f.Cut.Add(-24*time.Hour)).Scan(&n, &s), "mode %v", mode)
			require.EqualValues(t, want.Rows[0][0], n, "mode %v", mode)
			var got decimal.Decimal
			require.NoError(t, got.Scan(mustText(t, s)))
			require.True(t, want.Rows[0][1].(decimal.Decimal).Equal(got), "mode %v: %s vs %s", mode, got, want.Rows[0][1])
			require.Greater(t, n, int64(0))
		}
	})

	t.Run("type OIDs", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeCacheStatement, nil)
		rows, err := c.Query(ctx, `SELECT value, "from", balancing_day, malo_id, true AS b, version, 1::BIGINT AS l, 1::INTEGER AS i, 1.5::DOUBLE AS d FROM readings LIMIT 3`)
		require.NoError(t, err)
		var oids []uint32
		for _, fd := range rows.FieldDescriptions() {
			oids = append(oids, fd.DataTypeOID)
		}
		n := 0
		for rows.Next() {
			vals, err := rows.Values()
			require.NoError(t, err)
			require.IsType(t, time.Time{}, vals[1])
			require.IsType(t, "", vals[3])
			n++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 3, n)
		require.Equal(t, []uint32{1700, 1184, 1082, 25, 16, 1700, 20, 23, 701}, oids)
	})

	t.Run("timestamptz in text format as PostgreSQL writes it", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeSimpleProtocol, nil)
		res, err := c.PgConn().Exec(ctx, `SELECT TIMESTAMPTZ '2025-10-23 04:00:00.5+02'`).ReadAll()
		require.NoError(t, err)
		require.Equal(t, "2025-10-23 02:00:00.5+00", string(res[0].Rows[0][0]), "JDBC parses +00, not Z")
	})

	t.Run("non-queries refused with 42501", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			c := servetest.PGConnect(t, addr, "admin", "s3cret", mode, nil)
			for _, q := range []string{
				`DELETE FROM readings_versions`,
				`INSERT INTO readings_versions SELECT * FROM readings_versions`,
				`CREATE TABLE x (a INT)`,
				`COPY readings FROM '/tmp/x.csv'`,
				`DROP VIEW readings`,
			} {
				_, err := c.Exec(ctx, q)
				require.Error(t, err, q)
				require.Equal(t, "42501", servetest.PGCode(err), "%s: %v", q, err)
				var pe *pgconn.PgError
				require.True(t, errors.As(err, &pe))
				require.Contains(t, pe.Message+pe.Hint, "tier routing", q)
			}
		}
	})

	t.Run("connect-time statements", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeCacheStatement, nil)
		var v string
		require.NoError(t, c.QueryRow(ctx, `SELECT version()`).Scan(&v))
		require.Contains(t, v, "PostgreSQL")
		require.NoError(t, c.QueryRow(ctx, `SHOW server_version`).Scan(&v))
		require.Contains(t, v, access.ServerVersion)
		require.NoError(t, c.QueryRow(ctx, `SELECT current_setting('server_version_num')`).Scan(&v))
		require.Equal(t, "150000", v)
		_, err := c.Exec(ctx, `SET application_name = 'x'`)
		require.NoError(t, err)
		tx, err := c.Begin(ctx)
		require.NoError(t, err)
		var n int64
		require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n))
		require.NoError(t, tx.Commit(ctx))
		var schema string
		require.NoError(t, c.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema))
		var tables int64
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'readings'`).Scan(&tables))
		require.EqualValues(t, 1, tables)
	})

	// What the client corpora (TestPGWireClientStatements) do not reach of the
	// virtual catalog and the PostgreSQL translations.
	t.Run("catalog translation", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			c := servetest.PGConnect(t, addr, "admin", "s3cret", mode, nil)
			rows := func(q string) [][]any {
				t.Helper()
				rs, err := c.Query(ctx, q)
				require.NoError(t, err, q)
				var out [][]any
				for rs.Next() {
					vals, err := rs.Values()
					require.NoError(t, err)
					out = append(out, vals)
				}
				require.NoError(t, rs.Err(), q)
				return out
			}
			require.Equal(t, [][]any{{int64(f.Oracle.RowCount(all, all))}}, rows(`SELECT count(*) FROM public.readings`), "schema public is the engine's main")
			require.Equal(t, [][]any{{"text"}, {"timestamp with time zone"}, {"numeric(18,6)"}, {"numeric(20,0)"}},
				rows(`SELECT pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a
					JOIN pg_catalog.pg_class c ON a.attrelid = c.oid
					WHERE c.oid = 'public.readings'::regclass AND a.attname IN ('malo_id', 'from', 'value', 'version') ORDER BY a.attnum`))
			require.Equal(t, [][]any{{int64(1184), int64(2200), int64(10), true, true, true, false}},
				rows(`SELECT 'timestamptz'::regtype::int8, 'public'::regnamespace::int8, 'admin'::regrole::int8,
					'Readings' ~* '^read', 'readings' ~ 'ding', 'readings' !~ '^ding', 'readings' !~* 'INGS$'`))
			require.Equal(t, [][]any{{"admin", "meterstore", "meterstore", "admin", "admin", "readings"}},
				rows(`SELECT pg_get_userbyid(relowner), current_database(), current_catalog, current_user, session_user, relname::name
					FROM pg_class WHERE relname = 'readings'`))
			require.Equal(t, [][]any{{"admin", "meterstore", "readings", "readings_versions", int64(0), nil}},
				rows(`SELECT (SELECT rolname FROM pg_roles WHERE oid = 10), (SELECT datname FROM pg_database), (SELECT min(tablename) FROM pg_tables),
					(SELECT max(tablename) FROM pg_tables), (SELECT count(*) FROM pg_views), pg_catalog.pg_get_constraintdef(1)`))
			require.Equal(t, [][]any{{"readings", "BASE TABLE"}, {"readings_versions", "BASE TABLE"}},
				rows(`SELECT table_name, table_type FROM information_schema.tables ORDER BY 1`))
			require.Equal(t, [][]any{{true, int64(2), "Readings"}},
				rows(`SELECT c.oid::regclass::int8 = 'readings'::regclass::int8, array_length(parse_ident('public."Readings"'), 1)::int8,
					(parse_ident('public."Readings"'))[2] FROM pg_class c WHERE relname = 'readings'`))
			_, err := c.Exec(ctx, `SELECT parse_ident('public.')`)
			require.Equal(t, "22023", servetest.PGCode(err), "%v", err)
			_, err = c.Exec(ctx, `SELECT 'nonesuch'::regclass`)
			require.Equal(t, "42P01", servetest.PGCode(err), "%v", err)
			_, err = c.Exec(ctx, `SELECT current_setting('nonesuch')`)
			require.Equal(t, "42704", servetest.PGCode(err), "%v", err)
		}
	})

	t.Run("authentication", func(t *testing.T) {
		host, port, _ := strings.Cut(addr, ":")
		for _, up := range [][2]string{{"admin", "wrong"}, {"mallory", "s3cret"}} {
			_, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=%s password=%s sslmode=disable", host, port, up[0], up[1]))
			require.Error(t, err)
			require.Equal(t, "28P01", servetest.PGCode(err), "%v", err)
		}
	})

	t.Run("cancel request", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeCacheStatement, nil)
		qctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		defer cancel()
		start := time.Now()
		var n int64
		err := c.QueryRow(qctx, `SELECT count(*) FROM range(1000000000000) a(i), range(1000) b(j) WHERE (a.i * b.j) % 7 = 3`).Scan(&n)
		require.Error(t, err)
		require.Less(t, time.Since(start), 20*time.Second)
		// The server answered the cancel with 57014 (pgx reports it, or closes
		// the connection if the answer came after its deadline).
		if code := servetest.PGCode(err); code != "" {
			require.Equal(t, "57014", code, "%v", err)
		}
		c2 := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeCacheStatement, nil)
		require.NoError(t, c2.QueryRow(ctx, `SELECT 41 + 1`).Scan(&n))
		require.EqualValues(t, 42, n)
	})

	t.Run("a scoped user cannot see another tenant", func(t *testing.T) {
		admin := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeCacheStatement, nil)
		var other int64
		require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM readings_versions WHERE tenant = 'tenant02'`).Scan(&other))
		require.Greater(t, other, int64(0), "the fixture holds the other tenant's rows")

		wh := strings.TrimPrefix(f.Store.Warehouse, "file://")
		files, _ := filepath.Glob(filepath.Join(wh, "*", "*", "data", "*.parquet"))
		if len(files) == 0 {
			files, _ = filepath.Glob(filepath.Join(wh, "**", "*.parquet"))
		}
		parquet := filepath.Join(wh, "x.parquet")
		if len(files) > 0 {
			parquet = files[0]
		}
		escapes := []string{
			`SELECT DISTINCT tenant FROM readings`,
			`SELECT DISTINCT tenant FROM readings_versions`,
			`SELECT tenant FROM readings WHERE tenant = 'tenant02'`,
			`SELECT tenant FROM readings WHERE tenant <> 'tenant01' OR true`,
			`SELECT tenant FROM readings UNION SELECT tenant FROM readings_versions`,
			`WITH x AS (SELECT * FROM readings_versions) SELECT DISTINCT tenant FROM x`,
			`SELECT DISTINCT tenant FROM main.readings`,
			`SELECT DISTINCT tenant FROM (SELECT * FROM readings_versions) AS readings`,
			`SELECT DISTINCT r.tenant FROM readings r JOIN readings_versions v USING (malo_id)`,
			`SELECT * FROM read_parquet('` + parquet + `')`,
			`SELECT * FROM '` + parquet + `'`,
			`SELECT * FROM meter_unplanned('readings_versions')`,
			`SELECT * FROM parquet_scan('` + wh + `/**/*.parquet')`,
			`ATTACH ':memory:' AS other`,
			`COPY (SELECT * FROM readings_versions) TO '/tmp/escape.csv'`,
			`RESET ALL; SELECT DISTINCT tenant FROM readings_versions`,
			`SET lock_configuration = false; SELECT DISTINCT tenant FROM readings`,
			`SELECT 1; SELECT tenant FROM readings_versions WHERE tenant = 'tenant02'`,
			`EXPORT DATABASE '/tmp/escape'`,
			`SELECT * FROM duckdb_tables()`,
			`SELECT DISTINCT tenant FROM readings_versions AS OF 'x'`,
		}
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			alice := servetest.PGConnect(t, addr, "alice", "alice-pw", mode, nil)
			var own int64
			require.NoError(t, alice.QueryRow(ctx, `SELECT count(*) FROM readings_versions`).Scan(&own))
			require.Greater(t, own, int64(0))
			for _, q := range escapes {
				if mode != pgx.QueryExecModeSimpleProtocol && strings.Contains(q, ";") {
					continue
				}
				rows, err := alice.Query(ctx, q)
				if err != nil {
					continue
				}
				for rows.Next() {
					vals, err := rows.Values()
					require.NoError(t, err)
					for _, v := range vals {
						require.NotEqual(t, "tenant02", fmt.Sprint(v), "%s returned another tenant's row", q)
					}
				}
				rows.Close()
			}
			// A parameter naming the other tenant finds nothing.
			var n int64
			require.NoError(t, alice.QueryRow(ctx, `SELECT count(*) FROM readings_versions WHERE tenant = $1`, "tenant02").Scan(&n))
			require.Zero(t, n)
		}
	})

	t.Run("psql", func(t *testing.T) {
		psql, err := exec.LookPath("psql")
		if err != nil {
			t.Skip("psql not installed")
		}
		host, port, _ := strings.Cut(addr, ":")
		run := func(args ...string) string {
			cmd := exec.Command(psql, append([]string{"-X", "-h", host, "-p", port, "-U", "admin", "-d", "meterstore"}, args...)...)
			cmd.Env = append(os.Environ(), "PGPASSWORD=s3cret", "PGSSLMODE=disable")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			return string(out)
		}
		out := run("-c", `\d readings`)
		require.Contains(t, out, `"public.readings"`)
		require.Regexp(t, `value\s+\|\s+numeric\(\d+,\d+\)`, out)
		require.Regexp(t, `from\s+\|\s+timestamp with time zone`, out)
		require.NotContains(t, out, "ERROR")
		out = run("-c", `\d`)
		require.Contains(t, out, "readings_versions")
		out = run("-c", `\d+ readings`)
		require.NotContains(t, out, "ERROR")
		out = run("-c", `SELECT count(*) FROM readings`)
		require.Contains(t, out, fmt.Sprint(f.Oracle.RowCount(all, all)))
		require.NotContains(t, out, "meterstore: watermark")
		out = run("-c", `SET client_min_messages = log`, "-c", `SELECT count(*) FROM readings`)
		require.Contains(t, out, "LOG:  meterstore: watermark")
		cmd := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", "admin", "-d", "meterstore", "-c", `DELETE FROM readings`)
		cmd.Env = append(os.Environ(), "PGPASSWORD=s3cret", "PGSSLMODE=disable")
		b, err := cmd.CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(b), "read-only")
	})
}

func mustText(t *testing.T, n pgtype.Numeric) string {
	t.Helper()
	b, err := n.MarshalJSON()
	require.NoError(t, err)
	return strings.Trim(string(b), `"`)
}

// TestPGWireStreamsLargeResults: two million generated rows stream through
// with the server's live heap bounded (no result is collected).
func TestPGWireStreamsLargeResults(t *testing.T) {
	if testing.Short() {
		t.Skip("large result")
	}
	f := servetest.New(t)
	ctx := context.Background()
	_, addr := f.StartPG(t, f.Users(t))
	c := servetest.PGConnect(t, addr, "anyone", "", pgx.QueryExecModeCacheStatement, nil)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	const total = 10_000_000
	rows, err := c.Query(ctx, `SELECT i, i * 2 AS j, 'row ' || i::VARCHAR AS s, TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(i) AS t FROM range(`+fmt.Sprint(total)+`) r(i)`)
	require.NoError(t, err)
	var n, peak uint64
	for rows.Next() {
		n++
		if n%250_000 == 0 {
			peak = max(peak, heap())
		}
	}
	require.NoError(t, rows.Err())
	require.EqualValues(t, total, n)
	growth := int64(peak) - int64(base)
	t.Logf("%d rows, live heap %d MiB at start, peak %d MiB (growth %d MiB)", n, base>>20, peak>>20, growth>>20)
	// Collected, the rows would need well over 200 MiB.
	require.Less(t, growth, int64(48<<20), "server memory grew with the result")
}

// A balancing day bound as a parameter — as text, and as a DATE a driver
// encodes from a time.Time — prunes as the literal day does: a day below the
// watermark reads the cold tier only (the provenance notice), and the sum is
// the oracle's.
func TestPGWireDayParameterPrunes(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	_, addr := f.StartPG(t, f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"}))
	day := f.Cut.AddDate(0, 0, -2)
	all := time.Time{}
	want := f.Oracle.SumBy(all, all, func(r meterstore.Row) string { return r.BalancingDay.Format(time.DateOnly) })[day.Format(time.DateOnly)]
	require.False(t, want.IsZero())
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		for _, arg := range []any{day.Format(time.DateOnly), day} {
			var notices []string
			c := servetest.PGConnect(t, addr, "admin", "s3cret", mode, &notices)
			var s pgtype.Numeric
			require.NoError(t, c.QueryRow(ctx, `SELECT sum(value) FROM readings WHERE balancing_day = $1`, arg).Scan(&s), "mode %v arg %T", mode, arg)
			var got decimal.Decimal
			require.NoError(t, got.Scan(mustText(t, s)))
			require.True(t, want.Equal(got), "mode %v arg %T: pgwire %s oracle %s", mode, arg, got, want)
			require.NotEmpty(t, notices)
			require.Contains(t, notices[len(notices)-1], "tiers cold ·", "mode %v arg %T: %s", mode, arg, notices[len(notices)-1])
		}
	}
}
