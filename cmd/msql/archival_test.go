package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestShellReadsThroughAnArchival: a count during which an archival moves a
// window from PostgreSQL to Iceberg prints the whole count — the engine's
// cursor ran the statement again before a row was printed — and the
// provenance of the run it printed, at the moved watermark.
func TestShellReadsThroughAnArchival(t *testing.T) {
	ctx := context.Background()
	h := storetest.StartHourly(t, storetest.Options{}, 2)
	archived := 0
	hot := &storetest.ArchivalUnderScan{HotTier: store.HotTierOf(h.Table.Hot), Archive: func() error {
		out, err := h.Table.Archiver.Archive(ctx, h.Now, 1)
		if err == nil && out.ArchivedAnything() {
			archived++
		}
		return err
	}}
	e, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: h.Table.Config, Cold: store.ColdTierOf(h.Table.Cold), Hot: hot}}})
	require.NoError(t, err)
	defer e.Close()

	var out bytes.Buffer
	sh := newShell(ctx, &engineSession{eng: e}, &printer{out: &out, format: "table", provenance: true}, stdio{})
	require.NoError(t, sh.runStatement(ctx, `SELECT count(*) AS n FROM readings`))
	require.Equal(t, 1, archived, "the statement met one archival")
	require.EqualValues(t, 2, hot.Scans(), "the statement ran twice")
	all := time.Time{}
	require.Contains(t, out.String(), fmt.Sprintf("\n %d \n(1 row)\n", len(h.Oracle.Winners(all, all))), out.String())
	moved := "-- watermark " + h.Watermark.Add(time.Hour).UTC().Format(time.RFC3339) + " "
	require.Contains(t, out.String(), moved, "the provenance is the second run's:\n%s", out.String())
}
