package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
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

// archivalRace runs one archival window against a statement: the window is
// claimed when the statement starts reading the hot tier, and committed and
// dropped between the first and the second read of the statement's boundary
// check, whichever read comes first.
type archivalRace struct {
	mu      sync.Mutex
	phase   int // 0 planning, 1 the hot tier read with the window claimed, 2 the window archived
	claimed chan struct{}
	release chan struct{}
	done    chan error
	archive func() error
}

func newArchivalRace(archive func() error) *archivalRace {
	return &archivalRace{claimed: make(chan struct{}), release: make(chan struct{}), done: make(chan error, 1), archive: archive}
}

// hook holds the archival after its claim until the boundary check has made
// its first read.
func (r *archivalRace) hook(s archive.Step) error {
	if s == archive.AfterDetach {
		close(r.claimed)
		<-r.release
	}
	return nil
}

// step runs f, under the race's lock, if the race is in phase from, and
// moves it to the next phase.
func (r *archivalRace) step(from int, f func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != from {
		return nil
	}
	r.phase++
	return f()
}

// scanStarts starts the archival at the first hot scan and returns once the
// window is claimed (its partition detached).
func (r *archivalRace) scanStarts() error {
	return r.step(0, func() error {
		go func() { r.done <- r.archive() }()
		select {
		case <-r.claimed:
			return nil
		case err := <-r.done:
			return fmt.Errorf("the archival ended before its claim: %v", err)
		}
	})
}

// checkRead lets the held archival commit and drop its partition after the
// boundary check's first read.
func (r *archivalRace) checkRead() error {
	return r.step(1, func() error {
		close(r.release)
		return <-r.done
	})
}

// archived reports whether the window was archived during the statement.
func (r *archivalRace) archived() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase == 2
}

type racingHot struct {
	engine.HotTier
	race *archivalRace
}

func (h racingHot) Pages(req engine.HotScan) (engine.RowPages, error) {
	if err := h.race.scanStarts(); err != nil {
		return nil, err
	}
	return h.HotTier.Pages(req)
}

func (h racingHot) Detached(ctx context.Context) ([]engine.DetachedPartition, error) {
	det, err := h.HotTier.Detached(ctx)
	if err != nil {
		return nil, err
	}
	return det, h.race.checkRead()
}

type racingCold struct {
	engine.ColdTier
	race *archivalRace
}

func (c racingCold) Watermark(ctx context.Context, snapshot int64) (int64, time.Time, error) {
	snap, w, err := c.ColdTier.Watermark(ctx, snapshot)
	if err != nil {
		return 0, time.Time{}, err
	}
	return snap, w, c.race.checkRead()
}

// TestWindowArchivedDuringTheBoundaryCheck: a window claimed while a scoped
// session (a pgwire user's) reads the hot tier, then committed and dropped
// between the boundary check's two reads, is retried and answered in full —
// never an answer without the window's rows, which by then were in neither
// the parent the statement read nor the snapshot it pinned.
func TestWindowArchivedDuringTheBoundaryCheck(t *testing.T) {
	ctx := context.Background()
	var race *archivalRace
	h := storetest.StartHourly(t, storetest.Options{ArchiveHook: func(step archive.Step) error {
		if race == nil {
			return nil
		}
		return race.hook(step)
	}}, 3)
	tbl, cfg, now, w0 := h.Table, h.Table.Config, h.Now, h.Watermark
	tenant01 := 0
	inWindow := 0
	for _, r := range h.Oracle.Winners(time.Time{}, time.Time{}) {
		if len(r.Extra) > 0 && r.Extra[0] != nil && *r.Extra[0] == "tenant01" {
			tenant01++
			if !r.From.Before(w0) && r.From.Before(w0.Add(time.Hour)) {
				inWindow++
			}
		}
	}
	require.Positive(t, inWindow, "tenant01 has rows in the window after %s", w0)

	race = newArchivalRace(func() error {
		out, err := tbl.Archiver.Archive(ctx, now, 1)
		if err == nil && !out.ArchivedAnything() {
			err = errors.New("nothing archived")
		}
		return err
	})
	e, err := engine.Open(ctx, engine.Config{Tables: []engine.Table{{Config: cfg,
		Cold: racingCold{ColdTier: store.ColdTierOf(tbl.Cold), race: race},
		Hot:  racingHot{HotTier: store.HotTierOf(tbl.Hot), race: race}}}})
	require.NoError(t, err)
	defer e.Close()
	scoped, err := e.Walled().Scoped("tenant", "tenant01")
	require.NoError(t, err)
	res, err := scoped.Query(ctx, `SELECT count(*) FROM readings`)
	require.NoError(t, err)
	require.True(t, race.archived(), "the window was archived during the statement")
	require.Equal(t, int64(tenant01), res.Rows[0][0],
		"answered at watermark %s; the window [%s, +1h) holds %d of tenant01's rows", res.Provenance.Watermark.Format(time.RFC3339), w0.Format(time.RFC3339), inWindow)
	require.Equal(t, w0.Add(time.Hour), res.Provenance.Watermark)
}
