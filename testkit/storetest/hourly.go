package storetest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// Hourly is a store whose one table moves in hourly windows (partitions,
// archival step and settlement lag of an hour), holding two days of a
// two-tenant workload with its first windows archived: most rows are still in
// PostgreSQL, so every archival moves one window of what a statement reads.
type Hourly struct {
	*Store
	Table  *Table
	Oracle *testkit.Oracle // every row written
	// Now is an instant at which every window of the workload is settled:
	// Table.Archiver.Archive(ctx, Now, 1) moves the next one.
	Now time.Time
	// Watermark is where the archived windows end.
	Watermark time.Time
}

// StartHourly starts an Hourly store, writes the workload's rows to
// PostgreSQL and archives its first archived windows.
func StartHourly(t testing.TB, opt Options, archived int) *Hourly {
	t.Helper()
	ctx := context.Background()
	w := testkit.NewWorkload(25)
	w.MaLos, w.Days, w.Tenants = 6, 2, 2
	batch, err := w.Generate()
	require.NoError(t, err)
	spec := w.IntervalTable("readings_versions")
	spec.PartitionStep, spec.ArchivalStep, spec.SettlementLag, spec.PartitionHeadroom = time.Hour, time.Hour, time.Hour, 6*time.Hour
	cfg := spec.MustBuild()
	if opt.Now.IsZero() {
		opt.Now = batch.Days[0].Time()
	}
	h := &Hourly{Store: Start(t, opt, cfg), Oracle: testkit.NewOracle(cfg)}
	h.Table = h.Store.Table()
	WriteHot(t, h.Table, h.Oracle, batch.Deliveries)
	h.Now = batch.Days[len(batch.Days)-1].Time().Add(48 * time.Hour)
	out, err := h.Table.Archiver.Archive(ctx, h.Now, archived)
	require.NoError(t, err)
	h.Watermark = out.Watermark
	return h
}

// WriteHot encodes deliveries for tbl, records their rows in oracle and
// writes them to PostgreSQL, whatever the watermark.
func WriteHot(t testing.TB, tbl *Table, oracle *testkit.Oracle, deliveries []testkit.Delivery) {
	t.Helper()
	var rows []meterstore.Row
	for _, d := range deliveries {
		rs, err := tbl.Config.Encode(d.Series)
		require.NoError(t, err)
		rows = append(rows, rs...)
	}
	_, err := oracle.Record(rows...)
	require.NoError(t, err)
	for len(rows) > 0 {
		n := min(len(rows), 20000)
		_, err := tbl.Hot.Write(context.Background(), rows[:n])
		require.NoError(t, err)
		rows = rows[n:]
	}
}

// ArchivingEngine opens an engine over the table whose hot tier moves the
// next window to Iceberg as every other scan starts (ArchivalUnderScan).
func (h *Hourly) ArchivingEngine(t testing.TB) (*engine.Engine, *ArchivalUnderScan) {
	t.Helper()
	hot := &ArchivalUnderScan{HotTier: store.HotTierOf(h.Table.Hot), Archive: func() (bool, error) {
		out, err := h.Table.Archiver.Archive(context.Background(), h.Now, 1)
		return err == nil && out.ArchivedAnything(), err
	}}
	e, err := engine.Open(context.Background(), engine.Config{Tables: []engine.Table{{Config: h.Table.Config, Cold: store.ColdTierOf(h.Table.Cold), Hot: hot}}})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e, hot
}

// ArchivalUnderScan is a hot tier that runs Archive when every other scan
// starts, after the statement pinned its boundary: the statement meets an
// archival, and its run again does not.
type ArchivalUnderScan struct {
	engine.HotTier
	Archive  func() (moved bool, err error)
	scans    atomic.Int64
	archived atomic.Int64
}

// Pages starts a scan, archiving first on every other one.
func (h *ArchivalUnderScan) Pages(req engine.HotScan) (engine.RowPages, error) {
	if h.scans.Add(1)%2 == 1 {
		moved, err := h.Archive()
		if err != nil {
			return nil, err
		}
		if moved {
			h.archived.Add(1)
		}
	}
	return h.HotTier.Pages(req)
}

// Scans is how many scans started.
func (h *ArchivalUnderScan) Scans() int64 { return h.scans.Load() }

// Archived is how many windows Archive moved.
func (h *ArchivalUnderScan) Archived() int64 { return h.archived.Load() }
