package pgwire_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// TestPGWireStatementsEndWithTheirClient: a statement is stopped — DuckDB
// interrupted, the hot scan cancelled, the server's count of open statements
// back to 0 — when its client disconnects, sends a CancelRequest, or lets
// statement_timeout pass (set in the session or defaulted for the user); the
// client is told 57014 as PostgreSQL tells it.
func TestPGWireStatementsEndWithTheirClient(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	users := f.Users(t,
		settings.UserSettings{Name: "admin", Password: "s3cret"},
		settings.UserSettings{Name: "hasty", Password: "hasty-pw", StatementTimeout: 150 * time.Millisecond},
	)
	srv, addr := f.StartPG(t, users)

	t.Run("client disconnects", func(t *testing.T) {
		// Below pgx, which sends a CancelRequest of its own when its
		// connection fails: this client only goes away.
		open, addr := f.StartPG(t, f.Users(t))
		r := servetest.DialRawPG(t, addr)
		r.FE.Send(&pgproto3.Query{String: servetest.Endless})
		require.NoError(t, r.FE.Flush())
		servetest.WaitOpen(t, open, 1)
		require.NoError(t, r.Conn.Close())
		servetest.WaitOpen(t, open, 0)
	})

	t.Run("cancel request", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			c := servetest.PGConnect(t, addr, "admin", "s3cret", mode, nil)
			sent := make(chan error, 1)
			go func() { _, err := c.Exec(ctx, servetest.Endless); sent <- err }()
			servetest.WaitOpen(t, srv, 1)
			require.NoError(t, c.PgConn().CancelRequest(ctx))
			err := <-sent
			require.Equal(t, "57014", servetest.PGCode(err), "%v", err)
			require.Contains(t, err.Error(), "canceling statement due to user request")
			require.Zero(t, srv.OpenStatements())
			var n int
			require.NoError(t, c.QueryRow(ctx, `SELECT 41 + 1`).Scan(&n), "the session goes on")
			require.Equal(t, 42, n)
		}
	})

	t.Run("statement_timeout set in the session", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeCacheStatement, nil)
		_, err := c.Exec(ctx, `SET statement_timeout = '100ms'`)
		require.NoError(t, err)
		_, err = c.Exec(ctx, servetest.Endless)
		require.Equal(t, "57014", servetest.PGCode(err), "%v", err)
		require.Contains(t, err.Error(), "canceling statement due to statement timeout")
		require.Zero(t, srv.OpenStatements())
		_, err = c.Exec(ctx, `SET statement_timeout = 0`)
		require.NoError(t, err)
		var n int
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n))
		require.Positive(t, n)
	})

	t.Run("statement_timeout defaulted for the user", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "hasty", "hasty-pw", pgx.QueryExecModeSimpleProtocol, nil)
		var show string
		require.NoError(t, c.QueryRow(ctx, `SHOW statement_timeout`).Scan(&show))
		require.Equal(t, "150ms", show)
		_, err := c.Exec(ctx, servetest.Endless)
		require.Equal(t, "57014", servetest.PGCode(err), "%v", err)
		require.Contains(t, err.Error(), "canceling statement due to statement timeout")
		require.Zero(t, srv.OpenStatements())
	})

	t.Run("SHOW statement_timeout as PostgreSQL", func(t *testing.T) {
		ref := pgtest.Connect(t, pgtest.Database(t))
		ms := servetest.PGConnect(t, addr, "admin", "s3cret", pgx.QueryExecModeSimpleProtocol, nil)
		for _, set := range []string{`SET statement_timeout = '1s'`, `SET statement_timeout = 1500`, `SET statement_timeout TO '2min'`,
			`SET statement_timeout = '90s'`, `SET statement_timeout = '1h'`, `RESET statement_timeout`, `SET statement_timeout = DEFAULT`, `SET statement_timeout = '250ms'`} {
			var want, got string
			for c, v := range map[*pgx.Conn]*string{ref: &want, ms: &got} {
				_, err := c.Exec(ctx, set)
				require.NoError(t, err, set)
				require.NoError(t, c.QueryRow(ctx, `SHOW statement_timeout`).Scan(v))
			}
			require.Equal(t, want, got, set)
		}
		for _, bad := range []string{`SET statement_timeout = 'soon'`, `SET statement_timeout = -5`} {
			_, want := ref.Exec(ctx, bad)
			_, got := ms.Exec(ctx, bad)
			require.Equal(t, servetest.PGCode(want), servetest.PGCode(got), "%s: PostgreSQL %v, msql %v", bad, want, got)
		}
	})
}
