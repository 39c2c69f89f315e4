package proof

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/testkit"
)

// The open month is compacted as its days settle: its archived days merge into
// one current file (read without resolution) and one superseded file; late
// corrections into them, the days archived after, an archival window committed
// while a compaction of the month is under way and the month's end each keep
// every answer the oracle's — and the month-so-far is merged again each time.
func TestOpenMonthCompactedAsItsDaysSettle(t *testing.T) {
	nov := time.Date(2025, time.November, 1, 0, 0, 0, 0, time.UTC)
	f := newCompactionFixtureAt(t, 0xC0A5, nov.Add(12*time.Hour), 32)
	o := testkit.NewOracle(f.cfg)
	e := newEnv(t, f.first, f.cfg)
	e.appendAll(t, o, f.originals)
	e.appendAll(t, o, f.inWindow)
	tbl := e.table(t)
	cold := tbl.Cold()
	archiveTo := func(end time.Time) {
		t.Helper()
		_, err := tbl.Archive(e.ctx, archiveNow(f.cfg, end), 0)
		require.NoError(t, err)
	}
	november := func() catalog.Partition {
		t.Helper()
		parts, err := cold.Partitions(e.ctx)
		require.NoError(t, err)
		for _, p := range parts {
			if p.Month.Equal(nov) {
				return p
			}
		}
		t.Fatal("no November partition")
		return catalog.Partition{}
	}
	compact := func(opt catalog.CompactOptions) catalog.CompactResult {
		t.Helper()
		res, err := cold.Compact(e.ctx, opt)
		require.NoError(t, err)
		return res
	}
	compactedNovember := func(res catalog.CompactResult) bool {
		return slices.ContainsFunc(res.Partitions, func(p catalog.CompactedPartition) bool { return p.Month.Equal(nov) })
	}
	settled := `SELECT count(*), sum(value) FROM ` + f.cfg.ResolvedName() + ` WHERE "from" >= '2025-11-01 00:00:00+00' AND "from" < '2025-11-12 00:00:00+00'`

	archiveTo(time.Date(2025, time.November, 12, 0, 0, 0, 0, time.UTC))
	p := november()
	require.True(t, p.Open, "the watermark %s lies in November", e.watermark(t))
	require.GreaterOrEqual(t, p.Files, catalog.DefaultOpenMonthFiles, "eleven days of daily files")
	res := compact(catalog.CompactOptions{OpenMonthFiles: -1, Force: true})
	require.Len(t, res.Partitions, 1, "October (November 1 begins at 23:00Z), not the open month")
	require.Empty(t, compact(catalog.CompactOptions{OpenMonthFiles: p.Files + 1}).Partitions, "fewer new files than asked for")
	require.Equal(t, p.Files, november().Files)
	agree(t, e, o, "before compaction")

	res = compact(catalog.CompactOptions{})
	require.Len(t, res.Partitions, 1)
	require.Equal(t, nov, res.Partitions[0].Month)
	require.Positive(t, res.Partitions[0].Superseded, "in-window corrections")
	p = november()
	require.True(t, p.Compacted)
	require.Equal(t, 2, p.Files, "the current file and the superseded one")
	agree(t, e, o, "after the open month's compaction")
	plan := explainCold(t, e, e.cur.st.Engine(), settled)
	require.Contains(t, plan, "keys-unique mark")
	require.Contains(t, plan, "superseded files not read")
	q, err := e.cur.st.Engine().Query(e.ctx, settled)
	require.NoError(t, err)
	require.Zero(t, q.Provenance.ResolvedFiles, "the settled days are read without resolution")

	// Late corrections into the compacted days, and the days after.
	out := e.appendAll(t, o, f.late)
	require.True(t, out.HadLateCorrections())
	agree(t, e, o, "after late corrections into the compacted days")
	archiveTo(time.Date(2025, time.November, 20, 0, 0, 0, 0, time.UTC))
	agree(t, e, o, "after eight more days archived")
	plan = explainCold(t, e, e.cur.st.Engine(), settled)
	require.Contains(t, plan, "resolution applied", "the late corrections overlap the compacted file")

	// An archival window committed while the month is being compacted is kept,
	// and counts as new.
	var raced int
	res = compact(catalog.CompactOptions{Month: nov, Hook: func(s catalog.CompactStep) error {
		if s == catalog.CompactAfterWrite {
			before := november().Files
			archiveTo(time.Date(2025, time.November, 21, 0, 0, 0, 0, time.UTC))
			raced = november().Files - before
		}
		return nil
	}})
	require.Len(t, res.Partitions, 1, "November holds more new files than OpenMonthFiles")
	require.Positive(t, raced)
	p = november()
	require.False(t, p.Compacted)
	require.Equal(t, 2+raced, p.Files, "the month so far merged again; the window archived meanwhile kept")
	require.EqualValues(t, o.RawRowCount(time.Time{}, e.watermark(t)), e.coldRows(t), "Iceberg holds every row below the watermark once")
	agree(t, e, o, "after a compaction an archival window raced")
	plan = explainCold(t, e, e.cur.st.Engine(), settled)
	require.Contains(t, plan, "keys-unique mark")
	require.NotContains(t, plan, "resolution applied", "the late corrections merged")

	// The month ends: closed, and compacted whole once quiet.
	archiveTo(f.end)
	p = november()
	require.True(t, p.Closed)
	require.False(t, p.Open)
	require.True(t, compactedNovember(compact(catalog.CompactOptions{})))
	require.True(t, november().Compacted)
	require.EqualValues(t, o.RawRowCount(time.Time{}, e.watermark(t)), e.coldRows(t))
	agree(t, e, o, "after the closed month's compaction")
}
