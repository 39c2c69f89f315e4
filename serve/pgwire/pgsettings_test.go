package pgwire_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestPGWireSetTimeZone: a session cannot change the time zone the engine
// evaluates literals in, so SET TimeZone to another zone is refused (0A000,
// naming the zone in force) instead of accepted and ignored; setting the zone
// in force, DEFAULT, LOCAL and RESET are fine, and SHOW reports the zone that
// is really in force.
func TestPGWireSetTimeZone(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	users := f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"},
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"})
	_, addr := f.StartPG(t, users)
	for _, user := range [][2]string{{"admin", "s3cret"}, {"alice", "alice-pw"}} {
		c := servetest.PGConnect(t, addr, user[0], user[1], pgx.QueryExecModeSimpleProtocol, nil)
		for _, q := range []string{`SET TimeZone = 'Europe/Berlin'`, `SET TIME ZONE 'America/New_York'`, `SET SESSION timezone TO "Asia/Tokyo"`, `set local TimeZone='+01'`} {
			_, err := c.Exec(ctx, q)
			require.Error(t, err, "%s: %s must not be accepted and ignored", user[0], q)
			require.Equal(t, "0A000", servetest.PGCode(err), q)
			require.Contains(t, err.Error(), "UTC", q)
		}
		for _, q := range []string{`SET TimeZone = 'UTC'`, `SET TIME ZONE 'Etc/UTC'`, `SET timezone TO DEFAULT`, `SET TIME ZONE LOCAL`, `RESET TimeZone`, `SET extra_float_digits = 3`} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		var zone string
		require.NoError(t, c.QueryRow(ctx, `SHOW TimeZone`).Scan(&zone))
		require.Equal(t, "UTC", zone)
		require.Equal(t, "UTC", c.PgConn().ParameterStatus("TimeZone"))
	}
}

// TestPGWireStartupTimeZone: a time zone asked for in the startup message —
// pgjdbc always sends the JVM's as TimeZone, libpq sends PGTZ as timezone,
// PGOPTIONS as -c TimeZone=… — that is not the engine's cannot be honoured
// (SET TimeZone to it is refused) and must not be dropped silently: the
// connection warns, naming the zone asked for and the zone in force. The
// engine's own zone, or none, brings no warning.
func TestPGWireStartupTimeZone(t *testing.T) {
	f := servetest.New(t)
	_, addr := f.StartPG(t, f.Users(t))
	host, port, _ := strings.Cut(addr, ":")
	connect := func(extra string) []*pgconn.Notice {
		cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=meterstore dbname=meterstore sslmode=disable %s", host, port, extra))
		require.NoError(t, err)
		var notices []*pgconn.Notice
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n) }
		c, err := pgx.ConnectConfig(context.Background(), cfg)
		require.NoError(t, err, extra)
		require.NoError(t, c.Close(context.Background()))
		return notices
	}
	for _, extra := range []string{`TimeZone=America/New_York`, `timezone=America/New_York`, `options='-c TimeZone=America/New_York'`} {
		notices := connect(extra)
		require.Len(t, notices, 1, "%s: the zone asked for is not in force, and the client is told", extra)
		require.Equal(t, "WARNING", notices[0].Severity, extra)
		require.Contains(t, notices[0].Message, "America/New_York", extra)
		require.Contains(t, notices[0].Message, "UTC", extra)
	}
	for _, extra := range []string{``, `TimeZone=UTC`, `timezone=Etc/UTC`} {
		require.Empty(t, connect(extra), "%q: the zone in force brings no warning", extra)
	}
}
