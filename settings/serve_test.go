package settings_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/settings"
)

// TestServeSection: [serve] carries msql serve's limits; a limit no server
// can run with is refused naming its key.
func TestServeSection(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	s, err := settings.ParseSettings(`[serve]
confined_databases = 8
statement_timeout = "5m"
max_statements_per_user = 3
max_statement_bytes = 4096
max_parameters = 100
max_nesting = 50
max_result_rows = 1000
flight_session_idle = "10m"
`, none)
	require.NoError(t, err)
	require.Equal(t, settings.ServeSettings{ConfinedDatabases: 8, StatementTimeout: 5 * time.Minute, MaxStatementsPerUser: 3,
		MaxStatementBytes: 4096, MaxParameters: 100, MaxNesting: 50, MaxResultRows: 1000, FlightSessionIdle: 10 * time.Minute}, s.Serve)

	_, err = settings.ParseSettings("[serve]\nconfined_databases = -1\n", none)
	require.ErrorContains(t, err, "serve.confined_databases")
	_, err = settings.ParseSettings("[serve]\nmax_result_rows = -5\n", none)
	require.ErrorContains(t, err, "serve.max_result_rows")
	_, err = settings.ParseSettings("[serve]\nmax_rows = 5\n", none)
	require.ErrorContains(t, err, "serve.max_rows", "a typo is not ignored")
}
