package pgwire_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestPGWireCursors: psycopg's named cursors and other clients that read a
// large result in pieces declare a cursor and FETCH from it.
func TestPGWireCursors(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	_, addr := f.StartPG(t, f.Users(t,
		settings.UserSettings{Name: "admin", Password: "pw"},
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"}))
	modes := map[string]pgx.QueryExecMode{"simple": pgx.QueryExecModeSimpleProtocol, "extended": pgx.QueryExecModeCacheStatement}
	total := f.Oracle.RowCount(time.Time{}, time.Time{})
	require.Greater(t, total, 1000, "the fixture is large enough to fetch in several pieces")

	// fetchAll reads the cursor in FETCH FORWARD n pieces: the rows, their
	// sum, and the pieces' sizes.
	fetchAll := func(t *testing.T, c *pgx.Conn, cursor string, n int) (rows int, sum decimal.Decimal, pieces []int) {
		for {
			rs, err := c.Query(ctx, fmt.Sprintf("FETCH FORWARD %d FROM %s", n, cursor))
			require.NoError(t, err)
			got := 0
			for rs.Next() {
				var v decimal.Decimal
				require.NoError(t, rs.Scan(nil, &v))
				sum = sum.Add(v)
				got++
			}
			require.NoError(t, rs.Err())
			require.Equal(t, fmt.Sprintf("FETCH %d", got), rs.CommandTag().String())
			if got == 0 {
				return rows, sum, pieces
			}
			rows += got
			pieces = append(pieces, got)
		}
	}

	for mode, m := range modes {
		t.Run(mode, func(t *testing.T) {
			c := servetest.PGConnect(t, addr, "admin", "pw", m, nil)
			_, err := c.Exec(ctx, `DECLARE big CURSOR FOR SELECT malo_id, value FROM readings`)
			require.Equal(t, "25P01", servetest.PGCode(err), "a cursor WITHOUT HOLD needs a transaction, as in PostgreSQL: %v", err)

			tx, err := c.Begin(ctx)
			require.NoError(t, err)
			tag, err := tx.Exec(ctx, `DECLARE "Big" NO SCROLL CURSOR FOR SELECT malo_id, value FROM readings`)
			require.NoError(t, err)
			require.Equal(t, "DECLARE CURSOR", tag.String())
			tag, err = tx.Exec(ctx, `MOVE FORWARD 10 IN "Big"`)
			require.NoError(t, err)
			require.Equal(t, "MOVE 10", tag.String())
			rows, sum, pieces := fetchAll(t, c, `"Big"`, 400)
			require.Equal(t, total-10, rows)
			require.Equal(t, (total-10+399)/400, len(pieces))
			for _, p := range pieces[:len(pieces)-1] {
				require.Equal(t, 400, p)
			}
			_, err = tx.Exec(ctx, `FETCH BACKWARD 1 FROM "Big"`)
			require.Equal(t, "55000", servetest.PGCode(err), "cursors scan forward only: %v", err)
			require.NoError(t, tx.Rollback(ctx))

			tx, err = c.Begin(ctx)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `DECLARE big CURSOR FOR SELECT malo_id, value FROM readings`)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `DECLARE big CURSOR FOR SELECT 1`)
			require.Equal(t, "42P03", servetest.PGCode(err), "%v", err)
			require.NoError(t, tx.Rollback(ctx))
			tx, err = c.Begin(ctx)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `DECLARE big CURSOR FOR SELECT malo_id, value FROM readings`)
			require.NoError(t, err)
			rows, sum, _ = fetchAll(t, c, "big", 1000)
			require.Equal(t, total, rows)
			require.True(t, f.Oracle.Sum(time.Time{}, time.Time{}).Equal(sum), "sum %s, oracle %s", sum, f.Oracle.Sum(time.Time{}, time.Time{}))
			tag, err = tx.Exec(ctx, `CLOSE big`)
			require.NoError(t, err)
			require.Equal(t, "CLOSE CURSOR", tag.String())
			_, err = tx.Exec(ctx, `FETCH 1 FROM big`)
			require.Equal(t, "34000", servetest.PGCode(err), "a closed cursor is gone: %v", err)
			require.NoError(t, tx.Rollback(ctx))

			// COMMIT ends a cursor WITHOUT HOLD; one WITH HOLD outlives it.
			tx, err = c.Begin(ctx)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `DECLARE gone CURSOR FOR SELECT value, value FROM readings`)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `DECLARE kept CURSOR WITH HOLD FOR SELECT malo_id, value FROM readings WHERE value >= $1`, 0)
			require.NoError(t, err)
			listed := func() (names []string) {
				// psycopg asks pg_cursors before closing a cursor it did not declare.
				rs, err := c.Query(ctx, `SELECT name, is_holdable, statement, creation_time <= now() FROM pg_catalog.pg_cursors ORDER BY name`)
				require.NoError(t, err)
				for rs.Next() {
					var name, stmt string
					var hold, past bool
					require.NoError(t, rs.Scan(&name, &hold, &stmt, &past))
					require.Equal(t, name == "kept", hold, name)
					require.Contains(t, stmt, "DECLARE "+name+" CURSOR")
					require.True(t, past, name)
					names = append(names, name)
				}
				require.NoError(t, rs.Err())
				return names
			}
			require.Equal(t, []string{"gone", "kept"}, listed())
			require.NoError(t, tx.Commit(ctx))
			require.Equal(t, []string{"kept"}, listed())
			_, err = c.Exec(ctx, `FETCH 1 FROM gone`)
			require.Equal(t, "34000", servetest.PGCode(err), "%v", err)
			rows, _, _ = fetchAll(t, c, "kept", 5000)
			require.Positive(t, rows)
			_, err = c.Exec(ctx, `CLOSE ALL`)
			require.NoError(t, err)
			_, err = c.Exec(ctx, `FETCH 1 FROM kept`)
			require.Equal(t, "34000", servetest.PGCode(err), "%v", err)
			require.Empty(t, listed())
		})
	}

	t.Run("a scoped user's cursor reads the scope", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "alice", "alice-pw", pgx.QueryExecModeSimpleProtocol, nil)
		tx, err := c.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		_, err = tx.Exec(ctx, `DECLARE t CURSOR FOR SELECT DISTINCT tenant FROM readings_versions`)
		require.NoError(t, err)
		var tenants []string
		rs, err := tx.Query(ctx, `FETCH ALL FROM t`)
		require.NoError(t, err)
		for rs.Next() {
			var s string
			require.NoError(t, rs.Scan(&s))
			tenants = append(tenants, s)
		}
		require.NoError(t, rs.Err())
		require.Equal(t, []string{"tenant01"}, tenants)
		_, err = tx.Exec(ctx, `DECLARE w CURSOR FOR DELETE FROM readings_versions`)
		require.Error(t, err, "a cursor is declared for a query only")
	})
}
