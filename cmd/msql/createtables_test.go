package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCreateTablesCommand(t *testing.T) {
	dep := deploymentArgs(t)
	r := msql(t, "", append([]string{"create-tables"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "readings_versions (resolved as readings): created; merge key malo_id, obis_code, from, tenant; watermark none (nothing archived)\n", r.stdout)
	r = msql(t, "", append([]string{"create-tables"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, ": exists;")
}
