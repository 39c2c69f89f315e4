package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestResolutionByExclusionMatchesResolutionSQL: over generated windows of
// single-version files — a base version per window, corrections at two higher
// versions on scattered keys, a second operator's scope, two tenants, a window
// without corrections — the exclusion form answers exactly what the rendered
// resolution.sql answers, with and without a version ceiling.
func TestResolutionByExclusionMatchesResolutionSQL(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	conn := duckConn(t)
	dir := t.TempDir()
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := conn.ExecContext(ctx, `CREATE TABLE g AS
		WITH k AS (
			SELECT t, m, o, q, s, hash(t, m, o, q, s) AS h
			FROM range(2) a(t), range(5) b(m), range(2) c(o), range(0, 288) d(q), range(2) e(s)
			WHERE s = 0 OR (t + m + q) % 11 = 0
		), v AS (
			SELECT *, 1 + (q // 96) * 10 AS v FROM k
			UNION ALL SELECT *, 2 + (q // 96) * 10 FROM k WHERE h % 7 = 0 AND q // 96 <> 1
			UNION ALL SELECT *, 3 + (q // 96) * 10 FROM k WHERE h % 13 = 0 AND q // 96 <> 1
		)
		SELECT 'T' || t AS tenant, NULL::VARCHAR AS bilanzkreis, 'M' || m AS malo_id, NULL::VARCHAR AS melo_id,
			'1-0:' || (o + 1) || '.29.0' AS obis_code, 'STROM' AS sparte,
			TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_minutes((q * 15)::BIGINT) AS "from",
			TIMESTAMPTZ '2026-01-01 00:15:00+00' + to_minutes((q * 15)::BIGINT) AS "to",
			((h % 100000) / 1000.0 + v)::DECIMAL(18,6) AS value, 'KWH' AS unit, 'MEASURED' AS quality,
			'PT15M' AS resolution, 'TEST' AS source_kind, NULL::VARCHAR AS source_detail, NULL::VARCHAR AS provenance,
			v::DECIMAL(20,0) AS version, '990000000000' || s || ':2026-01' AS version_scope,
			TIMESTAMPTZ '2026-02-01 00:00:00+00' AS recorded_at, DATE '2026-01-01' + (q // 96)::INTEGER AS balancing_day,
			q // 96 AS win
		FROM v`)
	require.NoError(t, err)
	rows, err := conn.QueryContext(ctx, `SELECT DISTINCT win, version FROM g ORDER BY 1, 2`)
	require.NoError(t, err)
	var files []ColdFile
	for rows.Next() {
		var window int
		var version uint64
		require.NoError(t, rows.Scan(&window, &version))
		path := filepath.Join(dir, fmt.Sprintf("w%d-v%d.parquet", window, version))
		from := day0.Add(time.Duration(window) * 24 * time.Hour)
		to := from.Add(24*time.Hour - 15*time.Minute)
		files = append(files, ColdFile{Path: path, FromMin: &from, FromMax: &to, VersionMin: &version, VersionMax: &version, BalancingDay: true})
	}
	require.NoError(t, rows.Err())
	for _, f := range files {
		_, err := conn.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT * EXCLUDE (win) FROM g WHERE version = %d ORDER BY ALL) TO '%s'`, *f.VersionMin, f.Path))
		require.NoError(t, err)
	}
	agree := func(files []ColdFile, r coldRead) {
		for _, where := range []string{"", ` WHERE "version" <= 12`, ` WHERE "from" >= TIMESTAMPTZ '2026-01-01 12:00:00+00' AND "tenant" = 'T1'`} {
			ranked := cfg.RenderResolution("(" + readParquet(cfg, files, where) + ") AS _meterstore_src")
			parts, err := (&coldHalf{filter: func(timeRange) string { return where }, read: r, path: readParquetPath{}}).sql(cfg, 2)
			require.NoError(t, err)
			excluded := "SELECT * FROM (" + strings.Join(parts, ") UNION ALL SELECT * FROM (") + ")"
			var n, onlyRanked, onlyExcluded, versions int
			require.NoError(t, conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT
				(SELECT count(*) FROM (%[1]s)),
				(SELECT count(*) FROM ((%[1]s) EXCEPT ALL (%[2]s))),
				(SELECT count(*) FROM ((%[2]s) EXCEPT ALL (%[1]s))),
				(SELECT count(DISTINCT version) FROM (%[2]s))`, ranked, excluded)).Scan(&n, &onlyRanked, &onlyExcluded, &versions))
			require.Greater(t, n, 1000, where)
			require.Greater(t, versions, 2, "the answer mixes versions: %s", where)
			require.Zero(t, onlyRanked, where)
			require.Zero(t, onlyExcluded, where)
		}
	}
	r := readFor(files, true, false)
	require.NotEmpty(t, r.clean, "window 1 holds one version")
	require.Empty(t, r.ranked)
	require.Len(t, r.base, 2)
	require.Len(t, r.upper, 4)
	require.False(t, r.upperClean, "two versions of a key among the corrections")
	agree(files, r)
	// One correction version per window: the corrections are read as they are.
	oneFix := slices.DeleteFunc(slices.Clone(files), func(f ColdFile) bool { return *f.VersionMin%10 == 3 })
	r = readFor(oneFix, true, false)
	require.Len(t, r.upper, 2)
	require.True(t, r.upperClean)
	agree(oneFix, r)
	// A base file said to hold two versions: exclusion cannot be proven for
	// its run; a merge can, with the file of the next version as its base.
	two := *files[0].VersionMin + 1
	mixed := append([]ColdFile{{Path: files[0].Path, FromMin: files[0].FromMin, FromMax: files[0].FromMax, VersionMin: files[0].VersionMin, VersionMax: &two, BalancingDay: true}}, files[1:]...)
	r = readFor(mixed, true, false)
	require.ElementsMatch(t, []string{files[1].Path}, paths(r.mergeBase))
	require.ElementsMatch(t, []string{files[0].Path, files[2].Path}, paths(r.mergeOther))
	agree(mixed, r)
}

// layoutFile is a file of a planner test: name, "from" days lo..hi,
// versions vmin..vmax, and options (malo bounds, marks, missing statistics);
// it carries field ids and the stored balancing_day, as the store writes it.
func layoutFile(name string, from, to int, vmin, vmax uint64, opts ...func(*ColdFile)) ColdFile {
	day := func(d int) *time.Time { x := ts("2025-01-01T00:00:00Z").AddDate(0, 0, d); return &x }
	f := ColdFile{Path: name, FromMin: day(from), FromMax: day(to), VersionMin: &vmin, VersionMax: &vmax, FieldIDs: true, BalancingDay: true}
	for _, o := range opts {
		o(&f)
	}
	return f
}

func malos(lo, hi string) func(*ColdFile) {
	return func(f *ColdFile) { f.MaloMin, f.MaloMax = &lo, &hi }
}

func keysUnique(f *ColdFile) { f.KeysUnique = true }
func superseded(f *ColdFile) { f.Superseded = true }

func TestElisionRuns(t *testing.T) {
	f := layoutFile
	current := func(files ...ColdFile) coldRead { return readFor(files, true, false) }
	// A year of daily files at distinct versions: disjoint, so nothing to resolve.
	r := current(f("a", 0, 0, 1, 1), f("b", 1, 1, 2, 2), f("c", 2, 2, 3, 3))
	require.Len(t, r.clean, 3)
	require.Zero(t, r.resolved())
	// A late correction overlapping day 1 at a higher version: exactly that run resolves.
	r = current(f("a", 0, 0, 1, 1), f("b", 1, 1, 2, 2), f("c", 2, 2, 3, 3), f("fix", 1, 1, 9, 9))
	require.ElementsMatch(t, []string{"a", "c"}, paths(r.clean))
	require.ElementsMatch(t, []string{"b"}, paths(r.base))
	require.ElementsMatch(t, []string{"fix"}, paths(r.upper))
	require.True(t, r.upperClean)
	// A large window's version continued in a second file (catalog rolls a file
	// over after a bound of row groups): same version, overlapping bounds, so
	// still nothing to resolve; with a correction, both are the run's base.
	r = current(f("b1", 1, 1, 2, 2), f("b2", 1, 1, 2, 2), f("c", 2, 2, 3, 3))
	require.Len(t, r.clean, 3)
	r = current(f("b1", 1, 1, 2, 2), f("b2", 1, 1, 2, 2), f("fix", 1, 1, 9, 9))
	require.ElementsMatch(t, []string{"b1", "b2"}, paths(r.base))
	require.ElementsMatch(t, []string{"fix"}, paths(r.upper))
	// A file holding two versions, unmarked, resolves itself.
	require.Len(t, current(f("a", 0, 0, 1, 2)).ranked, 1)
	// A missing statistic proves nothing.
	missing := f("m", 5, 5, 1, 1)
	missing.VersionMax = nil
	r = current(f("a", 0, 0, 1, 1), missing)
	require.Empty(t, r.clean)
	require.ElementsMatch(t, []string{"a"}, paths(r.mergeBase), "a alone holds one version")
	require.ElementsMatch(t, []string{"m"}, paths(r.mergeOther))
	// Two files of several versions each: nothing proves a key unique.
	require.Len(t, current(f("a", 0, 0, 1, 2), f("b", 0, 0, 1, 3)).ranked, 2)
	// A merge only where the base holds most rows.
	big, small := f("a", 0, 0, 1, 1), f("m", 0, 0, 1, 3)
	big.Records, small.Records = 10, 100
	require.Len(t, current(big, small).ranked, 2)
}

// TestElisionByMaloBounds: files that overlap on "from" but not on malo_id
// share no key; a missing or truncated malo_id bound overlaps every other.
func TestElisionByMaloBounds(t *testing.T) {
	f := layoutFile
	r := readFor([]ColdFile{f("a", 0, 9, 1, 1, malos("10000000001", "10000000005")), f("b", 0, 9, 2, 2, malos("10000000006", "10000000009"))}, true, false)
	require.Len(t, r.clean, 2)
	r = readFor([]ColdFile{f("a", 0, 9, 1, 1, malos("10000000001", "10000000005")), f("b", 0, 9, 2, 2, malos("10000000005", "10000000009"))}, true, false)
	require.Len(t, r.base, 1, "a shared malo_id bound overlaps")
	r = readFor([]ColdFile{f("a", 0, 9, 1, 1, malos("10000000001", "10000000005")), f("b", 0, 9, 2, 2)}, true, false)
	require.Len(t, r.base, 1, "no malo_id bound: overlaps everything")
	// A correction of one meter dirties the files holding that meter only.
	r = readFor([]ColdFile{
		f("a", 0, 0, 1, 1, malos("10000000001", "10000000005")), f("b", 0, 0, 1, 1, malos("10000000006", "10000000009")),
		f("fix", 0, 0, 7, 7, malos("10000000007", "10000000007")),
	}, true, false)
	require.ElementsMatch(t, []string{"a"}, paths(r.clean))
	require.ElementsMatch(t, []string{"b"}, paths(r.base))
	require.ElementsMatch(t, []string{"fix"}, paths(r.upper))
}

// TestElisionByMarks: a compacted month — current files marked keys-unique,
// split by malo_id range, and the file of the rows they supersede — and late
// corrections into it.
func TestElisionByMarks(t *testing.T) {
	f := layoutFile
	month := []ColdFile{
		f("c1", 0, 30, 101, 3102, malos("10000000001", "10000000005"), keysUnique),
		f("c2", 0, 30, 101, 3102, malos("10000000006", "10000000009"), keysUnique),
		f("s", 0, 30, 101, 3101, malos("10000000001", "10000000009"), superseded),
	}
	// Current read: the superseded file is left out, each current file is clean.
	r := readFor(month, true, false)
	require.ElementsMatch(t, []string{"c1", "c2"}, paths(r.clean))
	require.ElementsMatch(t, []string{"s"}, paths(r.skipped))
	require.Equal(t, 2, r.byMark)
	require.True(t, r.usesMarks())
	// Under a version or recorded_at ceiling a superseded row can be the
	// answer: every file is read, the superseded file merged with the current ones.
	r = readFor(month, true, true)
	require.Empty(t, r.skipped)
	require.ElementsMatch(t, []string{"c1", "c2"}, paths(r.mergeBase))
	require.ElementsMatch(t, []string{"s"}, paths(r.mergeOther))
	// readings_versions reads every file as it is.
	require.Len(t, readFor(month, false, false).clean, 3)
	// A late correction at a creation-time version (above the month's newest):
	// its run is resolved by exclusion against it alone.
	late := f("late", 12, 12, 4001, 4001, malos("10000000007", "10000000007"))
	r = readFor(append(slices.Clone(month), late), true, false)
	require.ElementsMatch(t, []string{"c1"}, paths(r.clean))
	require.ElementsMatch(t, []string{"c2"}, paths(r.base))
	require.ElementsMatch(t, []string{"late"}, paths(r.upper))
	require.Empty(t, r.ranked)
	// One whose version lies within the month's: merged, that run only.
	older := f("older", 12, 12, 1201, 1201, malos("10000000007", "10000000007"))
	r = readFor(append(slices.Clone(month), older), true, false)
	require.ElementsMatch(t, []string{"c1"}, paths(r.clean))
	require.ElementsMatch(t, []string{"c2"}, paths(r.mergeBase))
	require.ElementsMatch(t, []string{"older"}, paths(r.mergeOther))
	// An unmarked multi-version file proves nothing.
	r = readFor([]ColdFile{f("c", 0, 30, 101, 3102)}, true, false)
	require.Len(t, r.ranked, 1)
}

func paths(fs []ColdFile) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// TestIcebergScanTakesFewRunsOnly: iceberg_scan selects a part of a half by
// a predicate with a term per run it keeps apart, evaluated on every row it
// reads; a half resolved run by run over many daily files moves to the
// per-file read, one with a few corrected runs stays on iceberg_scan.
func TestIcebergScanTakesFewRunsOnly(t *testing.T) {
	cfg := testConfig(t)
	half := func(days, correctedEvery int) *coldHalf {
		var files []ColdFile
		for d := 0; d < days; d++ {
			files = append(files, layoutFile(fmt.Sprint("day", d), d, d, uint64(d+1), uint64(d+1)))
			if d%correctedEvery == 0 {
				files = append(files, layoutFile(fmt.Sprint("fix", d), d, d, uint64(1000+d), uint64(1000+d)))
			}
		}
		return &coldHalf{plan: ColdPlan{Files: files}, path: icebergScanPath{}, read: readFor(files, true, false)}
	}
	require.Empty(t, half(60, 30).perFileReason(cfg), "two corrected days")
	why := half(360, 2).perFileReason(cfg)
	require.Contains(t, why, "180 runs")
	require.Contains(t, why, "iceberg_scan")
}
