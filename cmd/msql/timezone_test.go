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

// TestSessionTimeZone: the shell's session time zone changes with SET
// TimeZone or .timezone, .status names it, a day typed as a literal starts at
// that zone's midnight, and TIMESTAMPTZ values print in it; RESET TimeZone
// returns to the configured zone (UTC here).
func TestSessionTimeZone(t *testing.T) {
	dep := tinyDemo(t)
	day := `SELECT count(*) AS n, min("from") AS first FROM readings
	  WHERE malo_id = (SELECT min(malo_id) FROM readings WHERE obis_code = '1-0:1.29.0') AND obis_code = '1-0:1.29.0'
	    AND "from" >= '2025-09-24' AND "from" < '2025-09-25'`
	for _, set := range []string{"SET TimeZone = 'Europe/Berlin'", "SET TIME ZONE 'Europe/Berlin';", ".timezone Europe/Berlin"} {
		t.Run(set, func(t *testing.T) {
			r := msql(t, "", append(dep, "--format", "csv", "-c", set, "-c", ".status", "-c", day, "-c", "RESET TimeZone", "-c", ".timezone", "-c", day)...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, "time zone Europe/Berlin\n")
			require.Contains(t, r.stdout, "n,first\n96,2025-09-24 00:00:00+02\n", "the Berlin day, printed in Berlin time")
			require.Contains(t, r.stdout, "\nUTC\nn,first\n96,2025-09-24 00:00:00+00\n", "RESET: the configured zone again, which .timezone prints")
		})
	}
	r := msql(t, "", append(dep, "-c", ".timezone Mars/Olympus")...)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `unknown time zone "Mars/Olympus"`)
}
