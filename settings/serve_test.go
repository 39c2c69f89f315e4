package settings_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/settings"
)

// TestServeSection: [serve] carries msql serve's limits; a limit no server
// can run with is refused naming its key.
func TestServeSection(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	s, err := settings.ParseSettings("[serve]\nconfined_databases = 8\n", none)
	require.NoError(t, err)
	require.Equal(t, 8, s.Serve.ConfinedDatabases)

	_, err = settings.ParseSettings("[serve]\nconfined_databases = -1\n", none)
	require.ErrorContains(t, err, "serve.confined_databases")
}
