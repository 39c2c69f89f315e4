package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit/pgtest"
)

// TestTimeZoneSetting: [engine] time_zone is the session zone of the shell:
// .status names it and a literal without an offset is read in it; the default
// is UTC.
func TestTimeZoneSetting(t *testing.T) {
	dsn, wh := pgtest.Database(t), "file://"+t.TempDir()
	cfg := func(zone string) string {
		path := filepath.Join(t.TempDir(), "meterstore.toml")
		engine := ""
		if zone != "" {
			engine = fmt.Sprintf("[engine]\ntime_zone = %q\n", zone)
		}
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("[hot]\nurl = %q\n[cold]\nwarehouse = %q\n%s[[tables]]\nname = \"readings_versions\"\n", dsn, wh, engine)), 0o644))
		return path
	}
	r := msql(t, "", "--config", cfg(""), "--format", "csv", "-c", ".status", "-c", `SELECT TIMESTAMPTZ '2026-03-01 00:00' = TIMESTAMPTZ '2026-03-01 00:00:00+00' AS utc`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "time zone UTC")
	require.Contains(t, r.stdout, "utc\ntrue\n")

	r = msql(t, "", "--config", cfg("Europe/Berlin"), "--format", "csv", "-c", ".status", "-c", `SELECT TIMESTAMPTZ '2026-03-01 00:00' = TIMESTAMPTZ '2026-03-01 00:00:00+01' AS berlin`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "time zone Europe/Berlin")
	require.Contains(t, r.stdout, "berlin\ntrue\n")
}
