package engine

import (
	"context"
	"fmt"
	"path/filepath"
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
		files = append(files, ColdFile{Path: path, FromMin: &from, FromMax: &to, VersionMin: &version, VersionMax: &version})
	}
	require.NoError(t, rows.Err())
	for _, f := range files {
		_, err := conn.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT * EXCLUDE (win) FROM g WHERE version = %d ORDER BY ALL) TO '%s'`, *f.VersionMin, f.Path))
		require.NoError(t, err)
	}
	clean, dirty := elide(files)
	require.NotEmpty(t, clean, "window 1 holds one version")
	base, upper, single := splitByVersion(dirty)
	require.True(t, single)
	require.Len(t, base, 2)
	require.Len(t, upper, 4)

	for _, where := range []string{"", ` WHERE "version" <= 12`, ` WHERE "from" >= TIMESTAMPTZ '2026-01-01 12:00:00+00' AND "tenant" = 'T1'`} {
		ranked := cfg.RenderResolution("(" + readParquet(cfg, files, where) + ") AS _meterstore_src")
		excluded := readParquet(cfg, clean, where) + " UNION ALL " + resolveByExclusion(cfg, readParquet(cfg, dirty, where), readParquet(cfg, upper, where))
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
	// A file holding two versions proves nothing: the ranked form is used.
	two := *files[0].VersionMin + 1
	mixed := append([]ColdFile{{Path: files[0].Path, FromMin: files[0].FromMin, FromMax: files[0].FromMax, VersionMin: files[0].VersionMin, VersionMax: &two}}, files[1:]...)
	_, dirty = elide(mixed)
	_, _, single = splitByVersion(dirty)
	require.False(t, single)
}

func TestElisionRuns(t *testing.T) {
	day := func(d int) *time.Time { x := ts("2025-01-01T00:00:00Z").AddDate(0, 0, d); return &x }
	v := func(x uint64) *uint64 { return &x }
	f := func(name string, from, to int, vmin, vmax uint64) ColdFile {
		return ColdFile{Path: name, FromMin: day(from), FromMax: day(to), VersionMin: v(vmin), VersionMax: v(vmax)}
	}
	// A year of daily files at distinct versions: disjoint, so nothing to resolve.
	clean, dirty := elide([]ColdFile{f("a", 0, 0, 1, 1), f("b", 1, 1, 2, 2), f("c", 2, 2, 3, 3)})
	require.Len(t, clean, 3)
	require.Empty(t, dirty)
	// A late correction overlapping day 1 at a higher version: exactly that run resolves.
	clean, dirty = elide([]ColdFile{f("a", 0, 0, 1, 1), f("b", 1, 1, 2, 2), f("c", 2, 2, 3, 3), f("fix", 1, 1, 9, 9)})
	require.ElementsMatch(t, []string{"a", "c"}, paths(clean))
	require.ElementsMatch(t, []string{"b", "fix"}, paths(dirty))
	// A large window's version continued in a second file (catalog rolls a file
	// over after a bound of row groups): same version, overlapping bounds, so
	// still nothing to resolve; with a correction, both are the run's base.
	clean, dirty = elide([]ColdFile{f("b1", 1, 1, 2, 2), f("b2", 1, 1, 2, 2), f("c", 2, 2, 3, 3)})
	require.Len(t, clean, 3)
	require.Empty(t, dirty)
	_, dirty = elide([]ColdFile{f("b1", 1, 1, 2, 2), f("b2", 1, 1, 2, 2), f("fix", 1, 1, 9, 9)})
	base, upper, single := splitByVersion(dirty)
	require.True(t, single)
	require.ElementsMatch(t, []string{"b1", "b2"}, paths(base))
	require.ElementsMatch(t, []string{"fix"}, paths(upper))
	// A file holding two versions resolves itself.
	_, dirty = elide([]ColdFile{f("a", 0, 0, 1, 2)})
	require.Len(t, dirty, 1)
	// A missing statistic proves nothing.
	missing := f("m", 5, 5, 1, 1)
	missing.VersionMax = nil
	clean, dirty = elide([]ColdFile{f("a", 0, 0, 1, 1), missing})
	require.Empty(t, clean)
	require.Len(t, dirty, 2)
}

func paths(fs []ColdFile) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// TestReadForDecidesPerRun: the decision elide or resolve hands render.
func TestReadForDecidesPerRun(t *testing.T) {
	day := func(d int) *time.Time { x := ts("2025-01-01T00:00:00Z").AddDate(0, 0, d); return &x }
	v := func(x uint64) *uint64 { return &x }
	f := func(name string, d int, vmin, vmax uint64) ColdFile {
		return ColdFile{Path: name, FromMin: day(d), FromMax: day(d), VersionMin: v(vmin), VersionMax: v(vmax)}
	}
	files := []ColdFile{f("a", 0, 1, 1), f("b", 1, 2, 2), f("fix", 1, 9, 9)}
	r := readFor(files, true)
	require.Equal(t, byExclusion, r.how)
	require.ElementsMatch(t, []string{"a"}, paths(r.clean))
	require.ElementsMatch(t, []string{"b", "fix"}, paths(r.dirty))
	require.ElementsMatch(t, []string{"fix"}, paths(r.upper))
	require.Equal(t, unresolved, readFor(files, false).how, "readings_versions")
	require.Equal(t, ranked, readFor([]ColdFile{f("a", 0, 1, 1), f("m", 0, 2, 3)}, true).how)
	require.Empty(t, readFor([]ColdFile{f("a", 0, 1, 1)}, true).dirty)
}
