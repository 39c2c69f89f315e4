package serve_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"meterstore"
)

// TestPGWireAnswersAsPostgreSQL: what psycopg, pgjdbc and SQLAlchemy found
// different from PostgreSQL — column names without an alias, and division
// by zero, which DuckDB answers with NULL or infinity instead of an error.
func TestPGWireAnswersAsPostgreSQL(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, addr := f.startPG(t, f.users(t, meterstore.UserSettings{Name: "admin", Password: "pw"}))
	modes := map[string]pgx.QueryExecMode{"simple": pgx.QueryExecModeSimpleProtocol, "extended": pgx.QueryExecModeCacheStatement}

	t.Run("column names", func(t *testing.T) {
		for _, tc := range []struct {
			sql   string
			names []string
		}{
			{"SELECT count(*) FROM readings", []string{"count"}},
			{"SELECT sum(value), min(value), max(value), avg(value) FROM readings", []string{"sum", "min", "max", "avg"}},
			{"SELECT count(DISTINCT tenant) FROM readings", []string{"count"}},
			{"SELECT 1, 'x', 1 + 2", []string{"?column?", "?column?", "?column?"}},
			{"SELECT upper(tenant), tenant, r.malo_id FROM readings r LIMIT 1", []string{"upper", "tenant", "malo_id"}},
			{"SELECT CAST(value AS text), value::text, 1::int, CAST(1 AS bigint) FROM readings LIMIT 1", []string{"value", "value", "int4", "int8"}},
			{"SELECT CASE WHEN value > 0 THEN 1 END, coalesce(melo_id, '') FROM readings LIMIT 1", []string{"case", "coalesce"}},
			{"SELECT count(*) AS n, sum(value) s, tenant AS \"Tenant\" FROM readings GROUP BY tenant", []string{"n", "s", "Tenant"}},
			{"WITH x AS (SELECT tenant FROM readings) SELECT count(*) FROM x", []string{"count"}},
			{"SELECT date_trunc('day', \"from\") AS time, sum(value) FROM readings GROUP BY 1", []string{"time", "sum"}},
		} {
			for mode, m := range modes {
				c := pgConnect(t, addr, "admin", "pw", m, nil)
				rows, err := c.Query(ctx, tc.sql)
				require.NoError(t, err, "%s: %s", mode, tc.sql)
				var names []string
				for _, fd := range rows.FieldDescriptions() {
					names = append(names, fd.Name)
				}
				rows.Close()
				require.NoError(t, rows.Err(), tc.sql)
				require.Equal(t, tc.names, names, "%s: %s", mode, tc.sql)
			}
		}
	})

	t.Run("division by zero", func(t *testing.T) {
		for _, q := range []string{
			"SELECT 1/0", "SELECT 1 % 0", "SELECT 1.5 / 0", "SELECT 1::double precision / 0",
			"SELECT sum(value) / (count(*) - count(*)) FROM readings",
			"SELECT value / 0 FROM readings LIMIT 1", "SELECT 2 * 3 / (1 - 1) + 1",
		} {
			for mode, m := range modes {
				c := pgConnect(t, addr, "admin", "pw", m, nil)
				var v any
				err := c.QueryRow(ctx, q).Scan(&v)
				require.Error(t, err, "%s: %s answered %v", mode, q, v)
				require.Equal(t, "22012", pgCode(err), "%s: %s: %v", mode, q, err)
			}
		}
		c := pgConnect(t, addr, "admin", "pw", pgx.QueryExecModeCacheStatement, nil)
		for q, want := range map[string]float64{"SELECT 7.0 / 2": 3.5, "SELECT 2 * 3 / (4 - 1) + 1": 3, "SELECT 10 % 4": 2} {
			var got float64
			require.NoError(t, c.QueryRow(ctx, q).Scan(&got), q)
			require.Equal(t, want, got, q)
		}
		var n int64
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM readings WHERE value / 2 >= 0 AND $1::int / 3 = 1", 3).Scan(&n))
		require.EqualValues(t, f.oracle.RowCount(time.Time{}, time.Time{}), n)
	})
}
