package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/embedded"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestWatermarkRestoreCommand: a demo deployment whose watermark an
// out-of-band compaction and expiry removed refuses queries, naming the
// command; msql watermark restore commits it again and the count is back.
func TestWatermarkRestoreCommand(t *testing.T) {
	dep := tinyDemo(t)
	count := func() result { return msql(t, "", append([]string{"-c", "SELECT count(*) FROM readings"}, dep...)...) }
	before := count()
	require.Equal(t, 0, before.code, before.stderr)

	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{DSN: dep[1], Warehouse: dep[3]})
	require.NoError(t, err)
	cold, err := cat.CreateTable(ctx, embedded.Table())
	require.NoError(t, err)
	storetest.LoseWatermark(t, ctx, cold)
	require.NoError(t, cat.Close())

	lost := count()
	require.NotEqual(t, 0, lost.code, "a query must not read the lost watermark as zero: %s", lost.stdout)
	require.Contains(t, lost.stderr, "msql watermark restore")

	r := msql(t, "", append([]string{"watermark", "restore"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "readings_versions: watermark restored at ")
	after := count()
	require.Equal(t, 0, after.code, after.stderr)
	require.Equal(t, before.stdout, after.stdout)

	r = msql(t, "", append([]string{"watermark", "restore"}, dep...)...)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "nothing to restore")
}
