package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// testConfig is a table with one identity column and one attribute, for
// sessions that need a table but not its rows.
func testConfig(t testing.TB) meterstore.TableConfig {
	cfg, err := meterstore.TableSpec{Name: "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}, {Name: "bilanzkreis", Nullable: true}}}.Build()
	require.NoError(t, err)
	return cfg
}
