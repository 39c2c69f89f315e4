package serve_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// scopedEscapes are the escape suite's statements that a scoped [[users]]
// entry sends over a wire protocol: CTEs named as the warehouse's files,
// settings naming its directories, clauses on the rewritten relation and the
// system tables. Each is refused or answers with the scoped tenant's rows only.
func scopedEscapes(t *testing.T, f *servetest.Fixture) (attempts []string, secrets []string) {
	t.Helper()
	ctx := context.Background()
	files, _, err := f.Store.Table().Cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	file := files[0].Path
	wh := catalog.LocalPath(f.Store.Warehouse)
	res, err := f.Store.Engine.Query(ctx, `SELECT DISTINCT malo_id FROM readings WHERE tenant = 'tenant02'`)
	require.NoError(t, err)
	require.NotEmpty(t, res.Rows)
	secrets = []string{"tenant02", wh}
	for _, r := range res.Rows {
		secrets = append(secrets, fmt.Sprint(r[0]))
	}
	attempts = []string{
		`WITH "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`WITH "` + wh + `/**/*.parquet" AS (SELECT * FROM "` + wh + `/**/*.parquet") SELECT * FROM "` + wh + `/**/*.parquet"`,
		`WITH x AS (SELECT 1), "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`WITH RECURSIVE "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `"`,
		`SELECT * FROM (WITH "` + file + `" AS (SELECT * FROM "` + file + `") SELECT * FROM "` + file + `")`,
		`SELECT * FROM '` + file + `'`,
		`SELECT name, setting FROM pg_catalog.pg_settings`,
		`SELECT * FROM pg_settings`,
		`SELECT current_setting('allowed_directories')`,
		`SELECT current_setting('temp_directory')`,
		`SELECT * FROM duckdb_settings()`,
		`SELECT * FROM readings_versions TABLESAMPLE 100%`,
		`SELECT count(*), min(tenant), max(tenant) FROM readings TABLESAMPLE 5 ROWS`,
		`SELECT * FROM readings AT (VERSION => 1)`,
		`SELECT * FROM readings_versions AT (TIMESTAMP => TIMESTAMPTZ '2020-01-01 00:00:00+00')`,
		`SELECT * FROM system.partitions`,
		`SELECT "partition", "rows", bytes FROM system.partitions WHERE "partition" LIKE '%tenant02%'`,
		`SELECT * FROM system.tables`,
		`SELECT * FROM system.snapshots`,
		`SELECT * FROM system.config`,
		// The red-team pass's attempts that held: a CTE named as the relation
		// it reads or shadowing it for an earlier one, the row as a struct,
		// positional and recursive reads, settings reached by another
		// spelling, the catalog's view definitions, and the plan's own text
		// (pgwire answers EXPLAIN; it must name no file or other tenant).
		`WITH readings_versions AS (SELECT * FROM readings_versions) SELECT * FROM readings_versions`,
		`WITH a AS (SELECT * FROM readings_versions), readings_versions AS (SELECT 1 AS x) SELECT * FROM a`,
		`SELECT readings_versions FROM readings_versions`,
		`SELECT * FROM range(1) t(x) POSITIONAL JOIN readings_versions`,
		`WITH RECURSIVE r AS (SELECT * FROM readings_versions UNION ALL SELECT * FROM r WHERE false) SELECT * FROM r`,
		`SELECT pg_catalog.current_setting('temp_directory')`,
		`SELECT current_setting(x) FROM (VALUES ('temp_directory'), ('home_directory')) t(x)`,
		`SELECT * FROM memory.pg_catalog.pg_settings`,
		`SELECT * FROM pg_catalog.pg_views`,
		`SELECT * FROM information_schema.views`,
		`SELECT * FROM readings_versions WHERE "from" >= '-infinity'`,
		`EXPLAIN SELECT * FROM readings_versions`,
		`EXPLAIN ANALYZE SELECT tenant, count(*) FROM readings_versions GROUP BY ALL`,
	}
	return attempts, secrets
}

// tryEscapes runs every attempt through run: a refusal must not name the
// warehouse (unless the statement does), an answer must not leak a secret.
func tryEscapes(t *testing.T, attempts, secrets []string, via string, run func(q string) ([][]any, error)) (refused, answered int) {
	t.Helper()
	for _, q := range attempts {
		rows, err := run(q)
		if err != nil {
			refused++
			if !strings.Contains(q, secrets[1]) {
				require.NotContains(t, err.Error(), secrets[1], "the refusal of %q names the warehouse", q)
			}
			continue
		}
		answered++
		require.Empty(t, leaks(rows, secrets), "leak through %q over %s", q, via)
	}
	return refused, answered
}

// catalogEstimates are statements reading the row estimate of the system
// tables from the catalog: each is refused or counts the scoped tenant's
// partitions only (own), never another tenant's.
var catalogEstimates = []string{
	`SELECT reltuples FROM pg_catalog.pg_class WHERE relname = 'partitions'`,
	`SELECT estimated_size FROM duckdb_tables() WHERE table_name = 'partitions'`,
}

// requireOwnEstimates runs catalogEstimates through run.
func requireOwnEstimates(t *testing.T, own int, via string, run func(q string) ([][]any, error)) {
	t.Helper()
	for _, q := range catalogEstimates {
		rows, err := run(q)
		if err != nil {
			continue
		}
		for _, r := range rows {
			n, err := strconv.ParseFloat(fmt.Sprint(r[0]), 64)
			require.NoError(t, err, "%s over %s: %v", q, via, r)
			require.LessOrEqual(t, n, float64(own), "%s over %s counts another tenant's partitions", q, via)
		}
	}
}

// leaks is the first cell of rows that names a secret ("" when none does).
func leaks(rows [][]any, secrets []string) string {
	for _, row := range rows {
		for _, cell := range row {
			s := fmt.Sprint(cell)
			for _, x := range secrets {
				if x != "" && strings.Contains(strings.ToLower(s), strings.ToLower(x)) {
					return fmt.Sprintf("%q names %q", s, x)
				}
			}
		}
	}
	return ""
}

// TestScopedEscapesOverPGWire: the escape suite through a scoped [[users]]
// entry over pgwire, in the simple and the extended protocol.
func TestScopedEscapesOverPGWire(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	require.NoError(t, f.Store.Engine.RefreshSystemTables(ctx, time.Now()))
	attempts, secrets := scopedEscapes(t, f)
	users := f.Users(t, settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"})
	_, addr := f.StartPG(t, users)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
		c := servetest.PGConnect(t, addr, "alice", "alice-pw", mode, nil)
		refused, answered := tryEscapes(t, attempts, secrets, fmt.Sprintf("pgwire (mode %v)", mode),
			func(q string) ([][]any, error) { return pgRows(ctx, c, q) })
		t.Logf("pgwire mode %v: %d refused, %d answered with the scoped tenant's rows only", mode, refused, answered)
		rows, err := pgRows(ctx, c, `SELECT "partition" FROM system.partitions`)
		require.NoError(t, err)
		require.NotEmpty(t, rows, "the tenant's own partitions are listed")
		requireOwnEstimates(t, len(rows), "pgwire", func(q string) ([][]any, error) { return pgRows(ctx, c, q) })
		var n int64
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM readings TABLESAMPLE 5 ROWS`).Scan(&n))
		require.LessOrEqual(t, n, int64(5), "TABLESAMPLE samples the scoped relation")
	}
}

func pgRows(ctx context.Context, c *pgx.Conn, q string) ([][]any, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// TestScopedEscapesOverFlight: the escape suite through a scoped [[users]]
// entry over Flight SQL.
func TestScopedEscapesOverFlight(t *testing.T) {
	f := servetest.New(t)
	bg := context.Background()
	require.NoError(t, f.Store.Engine.RefreshSystemTables(bg, time.Now()))
	attempts, secrets := scopedEscapes(t, f)
	users := f.Users(t, settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"})
	addr := f.StartFlight(t, users)
	cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, err := cl.Client.AuthenticateBasicToken(bg, "alice", "alice-pw")
	require.NoError(t, err)
	refused, answered := tryEscapes(t, attempts, secrets, "Flight SQL",
		func(q string) ([][]any, error) { return servetest.FlightRows(ctx, cl, q) })
	t.Logf("Flight SQL: %d refused, %d answered with the scoped tenant's rows only", refused, answered)
	rows, err := servetest.FlightRows(ctx, cl, `SELECT "partition" FROM system.partitions`)
	require.NoError(t, err)
	require.NotEmpty(t, rows, "the tenant's own partitions are listed")
	requireOwnEstimates(t, len(rows), "Flight SQL", func(q string) ([][]any, error) { return servetest.FlightRows(ctx, cl, q) })
}
