package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/engine"
	"meterstore/hot"
	"meterstore/internal/storetest"
	"meterstore/store"
	"meterstore/testkit"
)

// archivingHot archives one more window the first time a scan reads a page,
// then fails that scan the way a partition dropped under it fails.
type archivingHot struct {
	engine.HotTier
	once    *sync.Once
	archive func() error
}

type archivingPages struct {
	engine.RowPages
	h archivingHot
}

func (h archivingHot) Pages(req engine.HotScan) (engine.RowPages, error) {
	p, err := h.HotTier.Pages(req)
	return archivingPages{RowPages: p, h: h}, err
}

func (p archivingPages) Next(ctx context.Context, buf []meterstore.Row) ([]meterstore.Row, error) {
	var failed error
	p.h.once.Do(func() {
		if err := p.h.archive(); err != nil {
			failed = err
			return
		}
		failed = fmt.Errorf("partition dropped during the scan: %w", hot.ErrPartitionDetached)
	})
	if failed != nil {
		return nil, failed
	}
	return p.RowPages.Next(ctx, buf)
}

// TestScanFailedByArchivalIsRetried: a hot scan that fails because an
// archival moved the boundary under it is run again, not reported, and the
// answer equals the oracle.
func TestScanFailedByArchivalIsRetried(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(9)
	w.MaLos = 4
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	oracle := testkit.NewOracle(cfg)
	s := storetest.Start(t, storetest.Options{Now: batch.Days[0].Time()}, cfg)
	tbl := s.Table()
	ingest(t, tbl, batch.Deliveries)
	_, err = oracle.RecordDeliveries(batch.Deliveries...)
	require.NoError(t, err)
	last := batch.Days[len(batch.Days)-1]
	_, err = tbl.Archiver.Archive(ctx, last.AddDays(-3).Time().Add(cfg.SettlementLag()), 0)
	require.NoError(t, err)

	archived := false
	e, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: cfg, Cold: store.ColdTierOf(tbl.Cold),
		Hot: archivingHot{HotTier: store.HotTierOf(tbl.Hot), once: &sync.Once{}, archive: func() error {
			out, err := tbl.Archiver.Archive(ctx, last.Time().Add(cfg.SettlementLag()), 1)
			archived = err == nil && out.ArchivedAnything()
			return err
		}}}}})
	require.NoError(t, err)
	defer e.Close()
	res, err := e.Query(ctx, `SELECT sum(value) FROM readings`)
	require.NoError(t, err)
	require.True(t, archived, "the first scan moved the boundary")
	all := time.Time{}
	require.True(t, oracle.Sum(all, all).Equal(sumOf(t, res)), "engine %s, oracle %s", sumOf(t, res), oracle.Sum(all, all))
}
