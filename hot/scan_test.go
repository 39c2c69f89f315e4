package hot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

func pkString(r meterstore.Row) string {
	return fmt.Sprintf("%s|%s|%d|%d", r.MaloID, r.ObisCode, r.From.UnixMicro(), r.Version)
}

// Many rows tie on (malo_id, from): three OBIS channels and four versions at each
// start. A cursor on (malo_id, from) alone would skip ties at every page boundary.
func TestKeysetScanReturnsEveryTiedRowOnce(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	var rows []meterstore.Row
	for _, m := range []string{maloA, maloB} {
		for _, o := range []string{obisImport, obisExport, "1-0:3.29.0"} {
			for v := uint64(1); v <= 4; v++ {
				rows = append(rows, quarterHours(m, o, day10, 25, 20260310000000+v)...)
			}
		}
	}
	_, err := st.Write(ctx, rows)
	require.NoError(t, err)
	want := map[string]meterstore.Row{}
	for _, r := range rows {
		want[pkString(r)] = r
	}

	for _, pageRows := range []int{1, 7, 24, 600, 10_000} {
		for _, unordered := range []bool{false, true} {
			t.Run(fmt.Sprintf("page=%d/unordered=%v", pageRows, unordered), func(t *testing.T) {
				seen := map[string]int{}
				pages := 0
				req := hot.ScanRequest{PageRows: pageRows, Table: st.PartitionName(day10), Unordered: unordered}
				err := st.Scan(ctx, req, func(p []meterstore.Row) error {
					if !unordered { // block pages hold what their blocks hold
						require.LessOrEqual(t, len(p), pageRows)
					}
					pages++
					for _, r := range p {
						seen[pkString(r)]++
					}
					return nil
				})
				require.NoError(t, err)
				require.Len(t, seen, len(rows))
				for k, n := range seen {
					require.Equal(t, 1, n, k)
					require.Contains(t, want, k)
				}
			})
		}
	}

	// Every field round-trips.
	var got []meterstore.Row
	require.NoError(t, st.Scan(ctx, hot.ScanRequest{PageRows: 5, Eq: map[string]string{"malo_id": maloA, "obis_code": obisImport}}, func(p []meterstore.Row) error {
		got = append(got, p...)
		return nil
	}))
	require.Len(t, got, 100)
	for _, g := range got {
		w := want[pkString(g)]
		w.BalancingDay = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
		if g.From.Hour() >= 23 {
			w.BalancingDay = w.BalancingDay.AddDate(0, 0, 1)
		}
		require.True(t, g.Value.Equal(w.Value))
		g.Value = w.Value
		require.Equal(t, w, g)
	}
}

func TestScanFiltersAndProjection(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	var rows []meterstore.Row
	for v := uint64(1); v <= 3; v++ {
		rows = append(rows, quarterHours(maloA, obisImport, day10, 96, 20260310000000+v)...)
		r := quarterHours(maloA, obisImport, day10.Add(24*time.Hour), 96, 20260310000000+v)
		for i := range r {
			r[i].RecordedAt = testNow.Add(time.Duration(v) * time.Hour)
		}
		rows = append(rows, r...)
	}
	_, err := st.Write(ctx, rows)
	require.NoError(t, err)

	// Both paging modes answer alike: keyset through the index, blocks in storage order.
	collect := func(req hot.ScanRequest) []meterstore.Row {
		var out, unordered []meterstore.Row
		require.NoError(t, st.Scan(ctx, req, func(p []meterstore.Row) error { out = append(out, p...); return nil }))
		req.Unordered = true
		require.NoError(t, st.Scan(ctx, req, func(p []meterstore.Row) error { unordered = append(unordered, p...); return nil }))
		require.ElementsMatch(t, out, unordered)
		return out
	}
	require.Len(t, collect(hot.ScanRequest{From: day10, To: day10.Add(24 * time.Hour), PageRows: 50}), 288)
	require.Len(t, collect(hot.ScanRequest{From: day10.Add(24 * time.Hour)}), 288)
	require.Len(t, collect(hot.ScanRequest{MaxVersion: ptr(uint64(20260310000002))}), 384)
	require.Len(t, collect(hot.ScanRequest{From: day10.Add(24 * time.Hour), RecordedAtMax: ptr(testNow.Add(time.Hour))}), 96)
	require.Empty(t, collect(hot.ScanRequest{Eq: map[string]string{"obis_code": obisExport}}))

	// A projection: keyset paging reads the primary key as well (its cursor),
	// block paging only the projected columns; the values agree.
	projected := hot.ScanRequest{Columns: []string{"value"}, PageRows: 100}
	var proj, blockProj []meterstore.Row
	require.NoError(t, st.Scan(ctx, projected, func(p []meterstore.Row) error { proj = append(proj, p...); return nil }))
	require.Len(t, proj, 576)
	require.Equal(t, maloA, proj[0].MaloID, "a keyset scan reads the primary key")
	require.Empty(t, proj[0].Quality, "unprojected fields stay zero")
	require.Nil(t, proj[0].To)
	projected.Unordered = true
	require.NoError(t, st.Scan(ctx, projected, func(p []meterstore.Row) error { blockProj = append(blockProj, p...); return nil }))
	values := func(rows []meterstore.Row) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.Value.String()
		}
		return out
	}
	require.ElementsMatch(t, values(proj), values(blockProj))
	require.Equal(t, meterstore.Row{Value: blockProj[0].Value}, blockProj[0], "a block scan reads only the projection")

	sql := st.ScanSQL(hot.ScanRequest{From: day10, Columns: []string{"value"}})
	require.Contains(t, sql, `ORDER BY "malo_id", "obis_code", "from", "version" LIMIT 50000`)
	require.NotContains(t, sql, "quality")
	sql = st.ScanSQL(hot.ScanRequest{From: day10, Columns: []string{"from", "value"}, Unordered: true})
	require.True(t, strings.HasPrefix(sql, `SELECT "from", "value" FROM `), sql)
	require.Empty(t, st.ScanSQL(hot.ScanRequest{Columns: []string{}, Unordered: true}), "no column to read")

	err = st.Scan(ctx, hot.ScanRequest{Columns: []string{"nope"}}, func([]meterstore.Row) error { return nil })
	require.Error(t, err)
	err = st.Scan(ctx, hot.ScanRequest{Table: "pg_class"}, func([]meterstore.Row) error { return nil })
	require.ErrorIs(t, err, hot.ErrUnknownTable)
	require.Empty(t, st.ScanSQL(hot.ScanRequest{Eq: map[string]string{"x;drop": "1"}}))
	require.False(t, strings.Contains(st.ScanSQL(hot.ScanRequest{}), "WHERE"))
}

// Query is the scan's one SELECT with its values written in: it selects
// exactly the rows Scan pages, and a value cannot leave its literal whatever
// standard_conforming_strings says.
func TestQuerySelectsWhatScanPages(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	var rows []meterstore.Row
	for v := uint64(1); v <= 2; v++ {
		r := quarterHours(maloA, obisImport, day10, 96, 20260310000000+v)
		for i := range r {
			r[i].RecordedAt = testNow.Add(time.Duration(v) * time.Hour)
		}
		rows = append(rows, r...)
	}
	rows = append(rows, quarterHours(maloB, obisImport, day10, 96, 20260310000001)...)
	_, err := st.Write(ctx, rows)
	require.NoError(t, err)
	hostile := `a\' OR true --`
	for _, req := range []hot.ScanRequest{
		{},
		{From: day10.Add(6 * time.Hour), To: day10.Add(12 * time.Hour)},
		{Eq: map[string]string{"malo_id": maloA}, MaxVersion: ptr(uint64(20260310000001))},
		{Eq: map[string]string{"malo_id": maloA}, RecordedAtMax: ptr(testNow.Add(time.Hour))},
		{Eq: map[string]string{"malo_id": hostile}},
		{Eq: map[string]string{"obis_code": `it's`}},
	} {
		var scanned int64
		require.NoError(t, st.Scan(ctx, req, func(p []meterstore.Row) error { scanned += int64(len(p)); return nil }))
		q, err := st.Query(req)
		require.NoError(t, err)
		for _, conforming := range []string{"on", "off"} {
			var n int64
			// Parsed under the setting on a connection of its own: not a
			// statement prepared under the other one.
			conn := pgtest.Connect(t, pool.Config().ConnString())
			pgtest.Exec(t, conn, "SET standard_conforming_strings = "+conforming)
			require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM ("+q+") AS q", pgx.QueryExecModeExec).Scan(&n), q)
			require.Equal(t, scanned, n, "%s (standard_conforming_strings %s)", q, conforming)
		}
	}
	q, err := st.Query(hot.ScanRequest{From: day10, Eq: map[string]string{"malo_id": maloA}})
	require.NoError(t, err)
	require.Contains(t, q, `"from" >= '2026-03-10 00:00:00+00'::timestamptz`)
	require.Contains(t, q, `"malo_id" = E'`+maloA+`'::text`)
	require.NotContains(t, q, "ORDER BY")
	_, err = st.Query(hot.ScanRequest{Eq: map[string]string{"x;drop": "1"}})
	require.Error(t, err)
}

// A storage-order scan relies on rows never moving: UPDATE is refused, and a
// partition rewritten between pages fails the scan instead of answering twice.
func TestUnorderedScanGuards(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	var rows []meterstore.Row
	for v := uint64(1); v <= 4; v++ {
		rows = append(rows, quarterHours(maloA, obisImport, day10, 96, 20260310000000+v)...)
	}
	_, err := st.Write(ctx, rows)
	require.NoError(t, err)

	_, err = pool.Exec(ctx, `UPDATE readings_versions SET value = value + 1 WHERE malo_id = $1`, maloA)
	require.ErrorContains(t, err, "append-only")

	pager, err := st.Pager(hot.ScanRequest{Unordered: true, PageRows: 32})
	require.NoError(t, err)
	first, err := pager.Next(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, first)
	_, err = pool.Exec(ctx, "VACUUM FULL "+st.PartitionName(day10))
	require.NoError(t, err)
	for err == nil {
		var page []meterstore.Row
		page, err = pager.Next(ctx, nil)
		if err == nil && len(page) == 0 {
			t.Fatal("a scan across a rewrite ended without an error")
		}
	}
	require.ErrorContains(t, err, "was rewritten")
}

// The decoder reuses a column's previous value when the next is equal: runs of
// equal values, a NULL inside a run, a value changing and changing back, and
// runs crossing page boundaries all decode to the rows written.
func TestScanDecodesRunsOfEqualValues(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	details := []*string{ptr("a"), ptr("a"), nil, ptr("a"), ptr("b"), ptr("a"), nil, nil, ptr(""), ptr("b")}
	values := []string{"1.5", "1.5", "1.500001", "1.5", "0", "0", "-0.000001", "0", "1.5", "1.5"}
	var rows []meterstore.Row
	for _, m := range []string{maloA, maloB} {
		for i := range 40 {
			r := qh(m, obisImport, day10.Add(time.Duration(i)*15*time.Minute), values[i%len(values)], 20260310000001)
			r.SourceDetail = details[i%len(details)]
			r.Provenance = details[(i/3)%len(details)]
			if i%7 == 3 {
				r.MeloID = ptr(meloA)
			} else if i%7 > 3 {
				r.MeloID = ptr(meloB)
			}
			rows = append(rows, r)
		}
	}
	_, err := st.Write(ctx, rows)
	require.NoError(t, err)
	want := map[string]meterstore.Row{}
	for _, r := range rows {
		r.BalancingDay = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
		want[pkString(r)] = r
	}
	for _, pageRows := range []int{1, 3, 1000} {
		var got []meterstore.Row
		require.NoError(t, st.Scan(ctx, hot.ScanRequest{PageRows: pageRows}, func(p []meterstore.Row) error {
			got = append(got, p...)
			return nil
		}))
		require.Len(t, got, len(rows))
		for _, g := range got {
			w, ok := want[pkString(g)]
			require.True(t, ok, pkString(g))
			require.Equal(t, w.Value.String(), g.Value.String(), pkString(g))
			g.Value = w.Value
			require.Equal(t, w, g, "page %d", pageRows)
		}
	}
}
