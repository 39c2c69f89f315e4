package pgwire_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestPGWireRolesAndActivity: psql's \du and pg_roles list every configured
// user, without password or scope;
// pg_stat_activity lists a user's own sessions with what they run (a user
// without a scope sees every session); pg_cancel_backend(pid) cancels a
// statement of the user's own session and is refused for another user's.
func TestPGWireRolesAndActivity(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	users := f.Users(t,
		settings.UserSettings{Name: "admin", Password: "admin-pw"},
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"},
		settings.UserSettings{Name: "bob", Password: "bob-pw", Scope: "tenant=tenant02"},
	)
	srv, addr := f.StartPG(t, users)

	t.Run("psql du", func(t *testing.T) {
		out := newPsql(t, addr, "alice", "alice-pw").ok(t, nil, "-c", `\du`)
		require.Contains(t, out, "List of roles")
		for _, role := range []string{"admin", "alice", "bob"} {
			require.Regexp(t, role+`\s+\|`, out, "every [[users]] entry is a role")
		}
		for _, secret := range []string{"admin-pw", "alice-pw", "bob-pw", "tenant0"} {
			require.NotContains(t, out, secret)
		}
		require.NotContains(t, out, "ERROR")
		require.Regexp(t, `(?m)^ alice\s+\|[^|]*\| \{\}\s*$`, out, "no role is a member of another: an empty array, as PostgreSQL writes it")
		c := servetest.PGConnect(t, addr, "bob", "bob-pw", pgx.QueryExecModeSimpleProtocol, nil)
		rows, err := c.Query(ctx, `SELECT rolname, rolpassword FROM pg_roles ORDER BY rolname`)
		require.NoError(t, err)
		var names []string
		for rows.Next() {
			var name, password string
			require.NoError(t, rows.Scan(&name, &password))
			require.Equal(t, "********", password, "as PostgreSQL shows it")
			names = append(names, name)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []string{"admin", "alice", "bob"}, names)
	})

	t.Run("pg_stat_activity and pg_cancel_backend", func(t *testing.T) {
		alice1 := servetest.PGConnect(t, addr, "alice", "alice-pw", pgx.QueryExecModeSimpleProtocol, nil)
		alice2 := servetest.PGConnect(t, addr, "alice", "alice-pw", pgx.QueryExecModeSimpleProtocol, nil)
		bob := servetest.PGConnect(t, addr, "bob", "bob-pw", pgx.QueryExecModeSimpleProtocol, nil)
		admin := servetest.PGConnect(t, addr, "admin", "admin-pw", pgx.QueryExecModeSimpleProtocol, nil)
		running := alice1.PgConn().PID()
		sent := make(chan error, 1)
		go func() { _, err := alice1.Exec(ctx, servetest.Endless); sent <- err }()
		servetest.WaitOpen(t, srv, 1)

		pids := func(c *pgx.Conn) []uint32 {
			rows, err := c.Query(ctx, `SELECT pid, usename, state, query FROM pg_stat_activity ORDER BY pid`)
			require.NoError(t, err)
			var out []uint32
			for rows.Next() {
				var pid int32
				var user, state, query string
				require.NoError(t, rows.Scan(&pid, &user, &state, &query))
				out = append(out, uint32(pid))
				if uint32(pid) == running {
					require.Equal(t, "alice", user)
					require.Equal(t, "active", state)
					require.Equal(t, servetest.Endless, query)
				}
			}
			require.NoError(t, rows.Err())
			return out
		}
		seen := pids(alice2)
		require.Contains(t, seen, running)
		require.Contains(t, seen, alice2.PgConn().PID())
		require.NotContains(t, seen, bob.PgConn().PID(), "alice sees only her own sessions")
		all := pids(admin)
		require.True(t, slices.Contains(all, bob.PgConn().PID()) && slices.Contains(all, running), "admin sees every session: %v", all)

		_, err := bob.Exec(ctx, fmt.Sprintf(`SELECT pg_cancel_backend(%d)`, running))
		require.Error(t, err)
		require.Equal(t, "42501", servetest.PGCode(err), "%v", err)
		bobExtended := servetest.PGConnect(t, addr, "bob", "bob-pw", pgx.QueryExecModeCacheStatement, nil)
		_, err = bobExtended.Exec(ctx, `SELECT pg_cancel_backend($1)`, int32(running))
		require.Equal(t, "42501", servetest.PGCode(err), "%v", err)
		select {
		case err := <-sent:
			t.Fatalf("another user's pg_cancel_backend ended the statement: %v", err)
		case <-time.After(200 * time.Millisecond):
		}

		var ok bool
		aliceExtended := servetest.PGConnect(t, addr, "alice", "alice-pw", pgx.QueryExecModeCacheStatement, nil)
		require.NoError(t, aliceExtended.QueryRow(ctx, `SELECT pg_cancel_backend($1)`, int32(running)).Scan(&ok))
		require.True(t, ok)
		select {
		case err := <-sent:
			require.Equal(t, "57014", servetest.PGCode(err), "%v", err)
		case <-time.After(time.Minute):
			t.Fatal("pg_cancel_backend did not end the statement")
		}
		servetest.WaitOpen(t, srv, 0)
		require.NoError(t, alice2.QueryRow(ctx, `SELECT pg_cancel_backend(2147483647)`).Scan(&ok))
		require.False(t, ok, "no such process")
	})
}
