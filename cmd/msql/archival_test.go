package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestShellReadsThroughAnArchival: a count during which an archival moves a
// window from PostgreSQL to Iceberg prints the whole count — the engine's
// cursor ran the statement again before a row was printed — and the
// provenance of the run it printed, at the moved watermark.
func TestShellReadsThroughAnArchival(t *testing.T) {
	ctx := context.Background()
	h := storetest.StartHourly(t, storetest.Options{}, 2)
	e, hot := h.ArchivingEngine(t)

	var out bytes.Buffer
	sh := newShell(ctx, &engineSession{eng: e}, &printer{out: &out, format: "table", provenance: true}, stdio{})
	require.NoError(t, sh.runStatement(ctx, `SELECT count(*) AS n FROM readings`))
	require.EqualValues(t, 1, hot.Archived(), "the statement met one archival")
	require.EqualValues(t, 2, hot.Scans(), "the statement ran twice")
	all := time.Time{}
	require.Contains(t, out.String(), fmt.Sprintf("\n %d \n(1 row)\n", len(h.Oracle.Winners(all, all))), out.String())
	moved := "-- watermark " + h.Watermark.Add(time.Hour).UTC().Format(time.RFC3339) + " "
	require.Contains(t, out.String(), moved, "the provenance is the second run's:\n%s", out.String())
}
