package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSplitAtTheWatermark: cold covers [lo, min(hi, W)), hot [max(lo, W), hi);
// each half only where the range and the mode reach; a partition detached at
// or above W is scanned beside the parent.
func TestSplitAtTheWatermark(t *testing.T) {
	w := ts("2025-03-01T00:00:00Z")
	e := testSession(t, &fixedCold{dir: t.TempDir(), snapshot: 7, watermark: w})
	hist, err := e.InReadMode(Historical)
	require.NoError(t, err)
	oper, err := e.InReadMode(Operational)
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		e         *session
		where     string
		cold, hot string // the halves' ranges, "" = not read
	}{
		{"spanning", e, `"from" >= '2025-02-01 00:00:00+00'`, "[2025-02-01T00:00:00Z, 2025-03-01T00:00:00Z)", "[2025-03-01T00:00:00Z, +∞)"},
		{"cold only", e, `"from" < '2025-02-01 00:00:00+00'`, "[-∞, 2025-02-01T00:00:00Z)", ""},
		{"hot only", e, `"from" >= '2025-03-01 00:00:00+00'`, "", "[2025-03-01T00:00:00Z, +∞)"},
		{"historical", hist, `true`, "[-∞, 2025-03-01T00:00:00Z)", ""},
		{"operational", oper, `true`, "", "[2025-03-01T00:00:00Z, +∞)"},
	} {
		pl, err := planThrough(t, tc.e, `SELECT * FROM readings WHERE `+tc.where, "split tiers")
		require.NoError(t, err, tc.name)
		ref := pl.refs[0]
		if tc.cold == "" {
			require.Nil(t, ref.cold, tc.name)
		} else {
			require.Equal(t, tc.cold, ref.cold.rng.String(), tc.name)
		}
		if tc.hot == "" {
			require.Nil(t, ref.hot, tc.name)
		} else {
			require.Equal(t, tc.hot, ref.hot.rng.String(), tc.name)
		}
	}

	hot := e.tables[0].Hot.(*fixedHot)
	hot.detached = []DetachedPartition{{Name: "p_old", From: ts("2025-02-28T00:00:00Z")}, {Name: "p_new", From: w}}
	scoped, err := e.Scoped("tenant", "t1")
	require.NoError(t, err)
	pl, err := planThrough(t, scoped, `SELECT * FROM readings WHERE tenant = 't2'`, "split tiers")
	require.NoError(t, err)
	ref := pl.refs[0]
	require.Len(t, ref.hot.scans, 2, "the parent and the partition above W")
	require.Equal(t, "p_new", ref.hot.scans[1].Table)
	require.Equal(t, map[string]string{"tenant": "t1"}, ref.hot.scans[0].Eq, "the scope wins")
	require.Contains(t, ref.cold.where(), `"tenant" = 't1'`)
}

// TestColdReadOfPlannedFilesDropsOnlyProvenBounds: a read of the planned files
// leaves out a "from" bound only where every file's statistics lie within it
// (the upper bound is exclusive: a file ending at it keeps it), and a file
// without statistics keeps both.
func TestColdReadOfPlannedFilesDropsOnlyProvenBounds(t *testing.T) {
	lo, hi := ts("2025-01-01T00:00:00Z"), ts("2025-02-01T00:00:00Z")
	file := func(from, to string) ColdFile {
		a, b := ts(from), ts(to)
		return ColdFile{FromMin: &a, FromMax: &b}
	}
	jan := file("2025-01-01T00:00:00Z", "2025-01-31T23:45:00Z")
	for _, tc := range []struct {
		name  string
		files []ColdFile
		want  string
	}{
		{"inside both", []ColdFile{jan, file("2025-01-10T00:00:00Z", "2025-01-20T00:00:00Z")}, "[-∞, +∞)"},
		{"one file before lo", []ColdFile{jan, file("2024-12-31T23:45:00Z", "2025-01-01T00:00:00Z")}, "[2025-01-01T00:00:00Z, +∞)"},
		{"one file ending at hi", []ColdFile{jan, file("2025-01-31T00:00:00Z", "2025-02-01T00:00:00Z")}, "[-∞, 2025-02-01T00:00:00Z)"},
		{"one file past both", []ColdFile{jan, file("2024-12-01T00:00:00Z", "2025-02-15T00:00:00Z")}, "[2025-01-01T00:00:00Z, 2025-02-01T00:00:00Z)"},
		{"statistics missing", []ColdFile{jan, {}}, "[2025-01-01T00:00:00Z, 2025-02-01T00:00:00Z)"},
	} {
		require.Equal(t, tc.want, unprovenBounds(timeRange{&lo, &hi}, tc.files).String(), tc.name)
	}
	require.Equal(t, "[-∞, 2025-02-01T00:00:00Z)", unprovenBounds(timeRange{hi: &hi}, []ColdFile{file("2024-01-01T00:00:00Z", "2025-02-01T00:00:00Z")}).String(),
		"an open side stays open")
}

// TestColdReadOfPlannedFilesAnswersAsTheFullFilter: over files whose
// statistics are their rows' true bounds, the read with the proven bounds
// left out returns exactly the rows of the read with the whole filter, for
// ranges inside, at and across the files' edges.
func TestColdReadOfPlannedFilesAnswersAsTheFullFilter(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	conn := duckConn(t)
	dir := t.TempDir()
	var files []ColdFile
	for day := range 3 {
		from := ts("2025-01-01T00:00:00Z").Add(time.Duration(day) * 24 * time.Hour)
		to := from.Add(24*time.Hour - 15*time.Minute)
		path := filepath.Join(dir, fmt.Sprintf("d%d.parquet", day))
		_, err := conn.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT 'T1' AS tenant, NULL::VARCHAR AS bilanzkreis, 'M' || m AS malo_id, NULL::VARCHAR AS melo_id,
			'1-0:1.29.0' AS obis_code, 'STROM' AS sparte, %[1]s + to_minutes((q * 15)::BIGINT) AS "from",
			%[1]s + to_minutes((q * 15 + 15)::BIGINT) AS "to", (q + m)::DECIMAL(18,6) AS value, 'KWH' AS unit,
			'MEASURED' AS quality, 'PT15M' AS resolution, 'TEST' AS source_kind, NULL::VARCHAR AS source_detail,
			NULL::VARCHAR AS provenance, 1::DECIMAL(20,0) AS version, 's' AS version_scope,
			TIMESTAMPTZ '2025-02-01 00:00:00+00' AS recorded_at, CAST(%[1]s AS DATE) AS balancing_day
			FROM range(3) a(m), range(96) b(q)) TO '%[2]s'`, sqlTime(from), path))
		require.NoError(t, err)
		files = append(files, ColdFile{Path: path, FromMin: &from, FromMax: &to, BalancingDay: true})
	}
	at := func(s string) *time.Time { v := ts(s); return &v }
	for _, rng := range []timeRange{
		{at("2024-12-31T00:00:00Z"), at("2025-01-04T00:00:00Z")},
		{at("2025-01-01T00:00:00Z"), at("2025-01-03T23:45:00Z")},
		{at("2025-01-01T00:15:00Z"), at("2025-01-03T23:45:00.000001Z")},
		{at("2025-01-02T12:00:00Z"), nil},
		{nil, at("2025-01-02T00:00:00Z")},
		{nil, nil},
	} {
		full := readParquet(cfg, files, coldFilter(rng, nil, View{}))
		half := &coldHalf{rng: rng, filter: func(r timeRange) string { return coldFilter(r, nil, View{}) }}
		split, err := readParquetPath{}.relation(cfg, half, files)
		require.NoError(t, err)
		for _, proven := range []string{readParquet(cfg, files, half.filesWhere(files)), split} {
			var n, onlyFull, onlyProven int
			require.NoError(t, conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM (%[1]s)),
				(SELECT count(*) FROM ((%[1]s) EXCEPT ALL (%[2]s))), (SELECT count(*) FROM ((%[2]s) EXCEPT ALL (%[1]s)))`,
				full, proven)).Scan(&n, &onlyFull, &onlyProven), rng.String())
			require.Positive(t, n, rng.String())
			require.Zero(t, onlyFull, rng.String())
			require.Zero(t, onlyProven, rng.String(), proven)
		}
	}
}

// TestColdReadSplitsTheFilesWithinItsRange: the files whose statistics lie
// within the half's range are read with no "from" filter, the others with
// the bounds they do not prove; a file without statistics is never within.
func TestColdReadSplitsTheFilesWithinItsRange(t *testing.T) {
	lo, hi := ts("2025-01-01T00:00:00Z"), ts("2025-02-01T00:00:00Z")
	file := func(name, from, to string) ColdFile {
		a, b := ts(from), ts(to)
		return ColdFile{Path: name, FromMin: &a, FromMax: &b}
	}
	jan := file("jan", "2025-01-01T00:00:00Z", "2025-01-31T23:45:00Z")
	dec := file("dec", "2024-12-31T23:00:00Z", "2025-01-01T22:45:00Z")
	feb := file("feb", "2025-01-31T23:00:00Z", "2025-02-01T22:45:00Z")
	names := func(sets [][]ColdFile) (out [][]string) {
		for _, set := range sets {
			var ns []string
			for _, f := range set {
				ns = append(ns, f.Path)
			}
			out = append(out, ns)
		}
		return out
	}
	rng := timeRange{&lo, &hi}
	require.Equal(t, [][]string{{"jan"}, {"dec", "feb", ""}}, names(splitWithin(rng, []ColdFile{dec, jan, feb, {}})))
	require.Equal(t, [][]string{{"jan"}}, names(splitWithin(rng, []ColdFile{jan})))
	require.Equal(t, [][]string{{"dec"}}, names(splitWithin(rng, []ColdFile{dec})))
	require.Equal(t, [][]string{{"dec", "jan", "feb"}}, names(splitWithin(timeRange{}, []ColdFile{dec, jan, feb})))
}

// TestFilesRelationKeepsItsBound: FilesRelation's rows end before below, its
// files' statistics aside — it is no planned half and proves no bound.
func TestFilesRelationKeepsItsBound(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	conn := duckConn(t)
	path := filepath.Join(t.TempDir(), "two-days.parquet")
	_, err := conn.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT 'T1' AS tenant, NULL::VARCHAR AS bilanzkreis, 'M1' AS malo_id, NULL::VARCHAR AS melo_id,
		'1-0:1.29.0' AS obis_code, 'STROM' AS sparte, TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_minutes((q * 15)::BIGINT) AS "from",
		TIMESTAMPTZ '2025-01-01 00:15:00+00' + to_minutes((q * 15)::BIGINT) AS "to", q::DECIMAL(18,6) AS value, 'KWH' AS unit,
		'MEASURED' AS quality, 'PT15M' AS resolution, 'TEST' AS source_kind, NULL::VARCHAR AS source_detail,
		NULL::VARCHAR AS provenance, 1::DECIMAL(20,0) AS version, 's' AS version_scope,
		TIMESTAMPTZ '2025-02-01 00:00:00+00' AS recorded_at, DATE '2025-01-01' + (q // 96)::INTEGER AS balancing_day
		FROM range(192) r(q)) TO '%s'`, path))
	require.NoError(t, err)
	from, to := ts("2025-01-01T00:00:00Z"), ts("2025-01-02T23:45:00Z")
	rel, err := FilesRelation(ctx, &Table{Config: cfg}, false, nil, []ColdFile{{Path: path, FromMin: &from, FromMax: &to, BalancingDay: true}}, ts("2025-01-02T00:00:00Z"))
	require.NoError(t, err)
	var n int
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT count(*) FROM ("+rel+")").Scan(&n))
	require.Equal(t, 96, n, "the first day's quarter-hours only")
}
