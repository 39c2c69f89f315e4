package plan

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkPlan is the planning overhead of one statement — parse, every pass,
// render — against tiers that answer from memory (a watermark, a month of
// daily files, one late correction), without running it:
//
//	go test -run '^$' -bench Plan ./engine/plan/
func BenchmarkPlan(b *testing.B) {
	ctx := context.Background()
	w := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	cold := &benchCold{watermark: w}
	for d := 0; d < 31; d++ {
		lo := time.Date(2025, 1, 1+d, 0, 0, 0, 0, time.UTC)
		hi, v := lo.Add(23*time.Hour+45*time.Minute), uint64(20250101000001+d)
		cold.files = append(cold.files, ColdFile{Path: fmt.Sprintf("/wh/d%02d.parquet", d), FromMin: &lo, FromMax: &hi, VersionMin: &v, VersionMax: &v, FieldIDs: true, BalancingDay: true})
	}
	lo, hi, v := time.Date(2025, 1, 20, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 20, 6, 0, 0, 0, time.UTC), uint64(20250125000001)
	cold.files = append(cold.files, ColdFile{Path: "/wh/fix.parquet", FromMin: &lo, FromMax: &hi, VersionMin: &v, VersionMax: &v, FieldIDs: true, BalancingDay: true})
	s := newSession(b, "", &Table{Config: testConfig(b), Hot: benchHot{}, Cold: cold})
	q := `SELECT meter_balancing_day("from", sparte) AS day, sum(value) FROM readings
		WHERE "from" >= $1 AND "from" < '2025-02-10 00:00:00+00' AND malo_id = $2 GROUP BY 1 ORDER BY 1`
	args := []any{time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC), "41373559241"}
	in := s.input(b, q, args...)
	for b.Loop() {
		p, err := Run(ctx, in)
		require.NoError(b, err)
		p.Release()
	}
}

type benchCold struct {
	watermark time.Time
	files     []ColdFile
}

func (c *benchCold) Watermark(context.Context, int64) (int64, time.Time, error) {
	return 1, c.watermark, nil
}

func (c *benchCold) Plan(_ context.Context, snapshot int64, from, to time.Time, _ map[string]string) (ColdPlan, error) {
	out := ColdPlan{SnapshotID: snapshot}
	for _, f := range c.files {
		if !to.IsZero() && !f.FromMin.Before(to) || !from.IsZero() && f.FromMax.Before(from) {
			out.Pruned++
			continue
		}
		out.Files = append(out.Files, f)
	}
	return out, nil
}

func (c *benchCold) SnapshotAt(context.Context, time.Time) (int64, error) { return 1, nil }
func (c *benchCold) DataDirectory() string                                { return "/wh" }
func (c *benchCold) ReadFile(context.Context, string) (RowPages, error) {
	return nil, fmt.Errorf("not readable")
}

type benchHot struct{}

func (benchHot) Pages(HotScan) (RowPages, error)                       { return nil, fmt.Errorf("not readable") }
func (benchHot) Detached(context.Context) ([]DetachedPartition, error) { return nil, nil }
func (benchHot) ScanSQL(HotScan) string                                { return "" }
func (benchHot) ScanQuery(HotScan) (string, error)                     { return "", nil }
