package pgwire_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
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
