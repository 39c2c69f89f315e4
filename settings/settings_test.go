package settings_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/settings"
)

func TestSettingsFromTOML(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://x/y"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	src := `
[hot]
url = "${DATABASE_URL}"
[cold]
warehouse = "file:///tmp/wh"
[[tables]]
name = "readings_versions"
extra_columns = [
  { name = "tenant", identity = true },
  { name = "bilanzkreis", check = "EIC:X" },
  { name = "ingest_source", values = ["MSCONS", "SMGW"] },
]
[tables.hot]
partition_step = "1d"
[tables.archival]
settlement_lag = "7d"
archival_step = "1d"
`
	s, err := settings.ParseSettings(src, lookup)
	require.NoError(t, err)
	require.Equal(t, "postgres://x/y", s.Hot.URL)
	require.Len(t, s.Tables, 1)
	require.Equal(t, []string{"malo_id", "obis_code", "from", "tenant"}, s.Tables[0].MergeKey())
	col, ok := s.Tables[0].Column("bilanzkreis")
	require.True(t, ok)
	require.Equal(t, "EIC:X", col.Check.String())

	_, err = settings.ParseSettings(strings.Replace(src, "DATABASE_URL", "MISSING_VAR", 1), lookup)
	require.ErrorIs(t, err, meterstore.ErrConfig)
	require.Contains(t, err.Error(), "MISSING_VAR")
	_, err = settings.ParseSettings(src+"\n[tables.archivl]\nx = 1\n", lookup)
	require.ErrorIs(t, err, meterstore.ErrConfig, "an unknown key is an error")
	_, err = settings.ParseSettings(strings.Replace(src, `"EIC:X"`, `"EIC:Q"`, 1), lookup)
	require.ErrorIs(t, err, meterstore.ErrConfig, "EIC:Q is refused at declaration")

	require.Empty(t, s.Engine.TimeZone, "no zone written: the engine's default, UTC")
	s, err = settings.ParseSettings(src+"\n[engine]\ntime_zone = \"Europe/Berlin\"\n", lookup)
	require.NoError(t, err)
	require.Equal(t, "Europe/Berlin", s.Engine.TimeZone)
	_, err = settings.ParseSettings(src+"\n[engine]\ntime_zone = \"Mars/Olympus\"\n", lookup)
	require.ErrorIs(t, err, meterstore.ErrConfig)
	require.Contains(t, err.Error(), "engine.time_zone")
}

// TestSettingsInterpolateParsedValues: ${VAR} is replaced in parsed string
// values, so a secret holding a quote, a backslash or a newline arrives intact,
// cannot inject keys, and a ${VAR} in a comment is not interpolated.
func TestSettingsInterpolateParsedValues(t *testing.T) {
	env := map[string]string{
		"DATABASE_URL": `postgres://meter:pa"ss\w0rd@db/hot`,
		"PASSWORD":     "x\"\n[hot]\nurl = \"postgres://attacker/\"",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	src := `# the URL comes from ${NOT_SET_ANYWHERE}
[hot]
url = "${DATABASE_URL}"
[[users]]
name = "ana"
password = "${PASSWORD}"
`
	s, err := settings.ParseSettings(src, lookup)
	require.NoError(t, err)
	require.Equal(t, env["DATABASE_URL"], s.Hot.URL)
	require.Len(t, s.Users, 1)
	require.Equal(t, env["PASSWORD"], s.Users[0].Password, "the value arrives as written, nothing injected")

	_, err = settings.ParseSettings(strings.Replace(src, "${PASSWORD}", "${MISSING_SECRET}", 1), lookup)
	require.ErrorIs(t, err, meterstore.ErrConfig)
	require.Contains(t, err.Error(), "${MISSING_SECRET}")
	require.Contains(t, err.Error(), "users.password", "the error names the setting")
}
