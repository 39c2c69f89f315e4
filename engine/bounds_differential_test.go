package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestBoundsAnswerAsDuckDBOverTheOracle runs statements whose "from" bounds
// the planner evaluates, narrows its reads by, drops when the tiers' ranges
// imply them and hands PostgreSQL as partials — in a session zone with a DST
// change (Europe/Berlin, 2025-10-26) and in UTC — and compares each answer
// with DuckDB's own answer to the same text over plain tables holding what
// the session sees of the oracle (winners and versions; known at an
// instant, scoped, below or at and above the watermark): whatever DuckDB
// makes of a literal, a cast, a DATE, an ambiguous local time, an OR, a CTE
// or a second reference, the store must make the same. Each statement runs
// twice (the second from the plan cache), after late corrections land on
// both sides of the watermark, after a compaction, while an archival has
// left its partitions detached, and after the watermark moves under the
// cached plans.
func TestBoundsAnswerAsDuckDBOverTheOracle(t *testing.T) {
	w := testkit.NewWorkload(0xd57)
	w.MaLos, w.Days, w.CorrectionRate = 3, 7, 0.3
	w.Start = time.Date(2025, time.October, 22, 22, 0, 0, 0, time.UTC) // 23 Oct Berlin: the 26th is 25 hours
	var stopAfterDetach atomic.Bool
	a := newArchivedStoreWith(t, w, storetest.Options{ArchiveHook: func(s archive.Step) error {
		if s == archive.AfterDetach && stopAfterDetach.Load() {
			return errStoppedAfterDetach
		}
		return nil
	}})
	ctx := context.Background()
	tables := []engine.Table{{Config: a.cfg, Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}}
	berlin, err := engine.Open(ctx, engine.Config{Tables: tables, TimeZone: "Europe/Berlin"})
	require.NoError(t, err)
	defer berlin.Close()
	malo := a.oracle.Winners(time.Time{}, time.Time{})[0].MaloID
	scoped, err := berlin.Scoped("malo_id", malo)
	require.NoError(t, err)
	knownAt := a.cut.Add(36 * time.Hour) // after some corrections are recorded, before others
	historical, err := a.s.Engine.InReadMode(engine.Historical)
	require.NoError(t, err)
	operational, err := berlin.InReadMode(engine.Operational)
	require.NoError(t, err)
	sessions := []differentialSession{
		{name: "UTC", e: a.s.Engine, zone: "UTC"},
		{name: "Europe/Berlin", e: berlin, zone: "Europe/Berlin"},
		{name: "Europe/Berlin known at " + knownAt.Format(time.RFC3339), e: berlin.AsKnownAt(knownAt), zone: "Europe/Berlin",
			ceiling: testkit.Ceiling{KnownAt: knownAt}},
		{name: "Europe/Berlin scoped to " + malo, e: scoped, zone: "Europe/Berlin", malo: malo},
		{name: "UTC historical", e: historical, zone: "UTC", mode: engine.Historical},
		{name: "Europe/Berlin operational", e: operational, zone: "Europe/Berlin", mode: engine.Operational},
	}

	next := a.batch.Days[len(a.batch.Days)-1].AddDays(-1).Time().Add(a.cfg.SettlementLag())
	stages := []struct {
		name   string
		before func(t *testing.T)
	}{
		{"archived", func(*testing.T) {}},
		{"corrected", a.deliverCorrections},
		{"compacted", func(t *testing.T) {
			res, err := a.tbl.Cold.Compact(ctx, catalog.CompactOptions{OpenMonthFiles: 1})
			require.NoError(t, err)
			require.Positive(t, res.FilesRemoved(), "compaction rewrites the archived days")
		}},
		{"archival stopped with partitions detached", func(t *testing.T) {
			stopAfterDetach.Store(true)
			defer stopAfterDetach.Store(false)
			_, err := a.tbl.Archiver.Archive(ctx, next, 0)
			require.ErrorIs(t, err, errStoppedAfterDetach)
			det, err := a.tbl.Hot.DetachedPartitions(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, det, "the hot half is read from the parent and from each detached partition")
		}},
		{"watermark moved", func(t *testing.T) {
			out, err := a.tbl.Archiver.Archive(ctx, next, 0)
			require.NoError(t, err)
			require.True(t, out.Watermark.After(a.cut), "the archival moves the watermark past %s: %s", a.cut, out.Watermark)
		}},
	}
	for _, st := range stages {
		st.before(t)
		require.NoError(t, a.tbl.Cold.Refresh(ctx))
		watermark, err := a.tbl.Cold.Watermark(ctx)
		require.NoError(t, err)
		for _, s := range sessions {
			ref := oracleDuckDB(t, a, s, watermark)
			for _, c := range differentialCases(a.cut, malo) {
				for _, relation := range []string{"readings", "readings_versions"} {
					q := strings.ReplaceAll(c.sql, "readings", relation)
					for run := 0; run < 2; run++ {
						requireSameAsDuckDB(t, s.e, ref, fmt.Sprintf("%s, %s, run %d", st.name, s.name, run), q, c.args...)
					}
				}
			}
		}
	}
}

// differentialSession is a handle and the oracle's view of what it reads.
type differentialSession struct {
	name    string
	e       *engine.Engine
	zone    string
	ceiling testkit.Ceiling
	malo    string          // the scope ("" for none)
	mode    engine.ReadMode // Historical: the rows below the watermark; Operational: at or above it
}

// sees: the session reads r, of the oracle's view, under watermark w.
func (s differentialSession) sees(r meterstore.Row, w time.Time) bool {
	switch {
	case s.malo != "" && r.MaloID != s.malo:
		return false
	case s.mode == engine.Historical:
		return r.From.Before(w)
	case s.mode == engine.Operational:
		return !r.From.Before(w)
	}
	return true
}

var errStoppedAfterDetach = errors.New("archival stopped after detaching")

type differentialCase struct {
	sql  string
	args []any
}

// differentialCases are the statements compared; cut is the first watermark,
// malo a MaLo the store holds.
func differentialCases(cut time.Time, malo string) []differentialCase {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ts := func(t time.Time) string {
		return "TIMESTAMPTZ '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
	}
	agg := `SELECT count(*), sum(value), min("from"), max("from") FROM readings WHERE `
	var out []differentialCase
	add := func(q string, args ...any) { out = append(out, differentialCase{q, args}) }
	where := []string{
		// local midnights of a 25-hour day, as text, DATE and TIMESTAMP
		`"from" >= '2025-10-26' AND "from" < '2025-10-27'`,
		`"from" >= DATE '2025-10-26' AND "from" < DATE '2025-10-27'`,
		`"from" BETWEEN DATE '2025-10-25' AND DATE '2025-10-26'`,
		`"from" >= TIMESTAMP '2025-10-26 00:00' AND "from" < TIMESTAMP '2025-10-27 00:00'`,
		`"from" >= CAST('2025-10-26' AS DATE) AND "from" < CAST('2025-10-26' AS DATE) + INTERVAL '1 day'`,
		`"from" >= TIMESTAMPTZ '2025-10-26 00:00:00+02' AND "from" < TIMESTAMPTZ '2025-10-26 00:00:00+02' + INTERVAL '1 day'`,
		`"from" >= date_trunc('day', TIMESTAMP '2025-10-26 13:00') AND "from" < date_trunc('month', DATE '2025-11-15')`,
		// the hour that happens twice, and a quarter-hour of it
		`"from" >= TIMESTAMP '2025-10-26 02:00' AND "from" < TIMESTAMP '2025-10-26 03:00'`,
		`"from" = TIMESTAMP '2025-10-26 02:30'`,
		`"from" = '2025-10-26 02:30'`,
		`"from" <= '2025-10-26 02:30'`,
		`"from" IN ('2025-10-26 02:15', '2025-10-26 02:30', TIMESTAMP '2025-10-26 02:45')`,
		`"from" BETWEEN '2025-10-26 02:15' AND '2025-10-26 02:15'`,
		// infinities and the epoch bound nothing, or everything
		`"from" >= 'infinity'`, `"from" < 'infinity'`, `"from" > '-infinity'`, `"from" <= '-infinity'`,
		`"from" >= 'epoch' AND "from" < 'infinity'`, `"from" <> 'infinity'`,
		// infinities as casts, DATEs, parameters, in IN lists, BETWEEN, NOT, OR, CASE, date_trunc
		`"from" > DATE '-infinity' AND "from" >= '-infinity'::TIMESTAMPTZ + INTERVAL '1 day' AND '-infinity' < "from"
			AND "from" IS DISTINCT FROM '-infinity' AND "from" NOT IN ('-infinity', 'infinity')`,
		`"from" IN ('-infinity', '2025-10-26 02:30') OR "from" IS NOT DISTINCT FROM 'infinity'`,
		`"from" BETWEEN '-infinity' AND '2025-10-26' AND NOT ("from" <= '-infinity')`,
		`CASE WHEN "from" > '-infinity' THEN "from" < '2025-10-28' END OR "from" = '-infinity'`,
		`balancing_day > DATE '-infinity' AND balancing_day BETWEEN '-infinity' AND '2025-10-26'
			AND date_trunc('day', "from") > '-infinity' AND date_trunc('month', balancing_day) >= DATE '-infinity'`,
		// days and instants beyond the years the tiers spell, instants of other precisions
		`balancing_day < DATE '300000-01-01' AND balancing_day > DATE '300000-01-01 (BC)'
			AND "from" > TIMESTAMPTZ '290300-12-22 (BC) 00:00:00+00' AND "from" < TIMESTAMPTZ '294246-12-31 00:00:00+00'`,
		`"from" = TIMESTAMP_NS '2025-10-26 02:30:00.000000001'`, `"from" >= TIMESTAMP_S '2025-10-26 02:30:00'`,
		// bounds the planner may not take: OR, NOT, CASE, a moment
		`"from" >= '2025-10-27' OR "from" < '2025-10-24'`,
		`NOT ("from" < '2025-10-26') AND NOT ("from" >= '2025-10-28')`,
		`CASE WHEN "from" >= '2025-10-26' THEN "from" < '2025-10-28' ELSE false END`,
		`"from" >= now() - INTERVAL '100 years' AND "from" < '2025-10-27'`,
		`"from" IS NOT DISTINCT FROM '2025-10-26 02:30'`,
		`("from" >= '2025-10-26') IS TRUE`,
		`"from" >= '2025-10-24' AND "from" - INTERVAL '1 hour' < '2025-10-26'`,
		// at and around the watermark, at microsecond edges
		`"from" >= ` + ts(cut),
		`"from" < ` + ts(cut),
		`"from" <= ` + ts(cut),
		`"from" <= ` + ts(cut.Add(-time.Microsecond)),
		`"from" < ` + ts(cut.Add(time.Microsecond)),
		`"from" > ` + ts(cut.Add(-15*time.Minute)),
		`"from" >= ` + ts(cut.Add(-15*time.Minute)) + ` AND "from" <= ` + ts(cut),
		`"from" = ` + ts(cut.Add(-15*time.Minute)),
		`"from" BETWEEN ` + ts(cut.Add(-time.Hour)) + ` AND ` + ts(cut.Add(time.Hour)),
		`"from" >= ` + ts(cut.Add(-24*time.Hour-time.Microsecond)) + ` AND "from" < ` + ts(cut.Add(24*time.Hour+time.Microsecond)),
		// balancing_day beside "from"
		`"from" >= '2025-10-25 12:00' AND balancing_day = DATE '2025-10-26'`,
		`"from" < '2025-10-27 03:00' AND balancing_day >= '2025-10-26'`,
		`readings."from" >= '2025-10-26' AND readings."from" < '2025-10-27'`,
	}
	for _, wh := range where {
		add(agg + wh)
	}
	// Parameters: Go instants in another zone, local text, NULL, reused.
	local := time.Date(2025, time.October, 26, 2, 30, 0, 0, berlin)
	for _, args := range [][]any{
		{local, local.Add(24 * time.Hour)},
		{"2025-10-26 02:30", "2025-10-27"},
		{cut, cut.Add(time.Hour)},
		{cut.Add(-time.Hour), cut},
		{nil, cut},
		{cut, nil},
		{"-infinity", cut},
	} {
		add(agg+`"from" >= $1 AND "from" < $2`, args...)
		add(agg+`"from" BETWEEN $1 AND $2`, args...)
		add(agg+`"from" >= $1 AND "from" < $2 AND balancing_day >= $1`, args...)
		add(`SELECT count(*), sum(value), $1 FROM readings WHERE "from" >= $1 AND "from" < $2`, args...)
		add(agg+`"from" >= $1::DATE AND "from" < $2::TIMESTAMP`, args...)
		add(agg+`"from" >= $1 AND "from" < CAST($1 AS TIMESTAMPTZ) + INTERVAL '1 day'`, args[0])
	}
	// Statement shapes around one reference: CTE, subquery, a second
	// reference, a join, a window, an EXISTS, a LEFT JOIN, grouped by day
	// and month (hot partials), a top-N.
	lo, hi := "'2025-10-25 12:00'", ts(cut.Add(30*time.Hour))
	for _, q := range []string{
		`WITH r AS (SELECT * FROM readings WHERE "from" >= ` + lo + `) SELECT count(*), sum(value) FROM r WHERE "from" < ` + hi,
		`SELECT count(*), sum(value) FROM (SELECT * FROM readings WHERE "from" >= ` + lo + `) s WHERE s."from" < ` + hi,
		`SELECT (SELECT count(*) FROM readings WHERE "from" >= ` + lo + `) - (SELECT count(*) FROM readings WHERE "from" >= ` + hi + `)`,
		`SELECT count(*), sum(a.value - b.value) FROM readings a JOIN readings b ON a.malo_id = b.malo_id AND a.obis_code = b.obis_code
			AND b."from" = a."from" + INTERVAL '15 minutes' WHERE a."from" >= ` + lo + ` AND b."from" < ` + hi,
		`SELECT count(*), sum(d) FROM (SELECT value - lag(value) OVER (PARTITION BY malo_id, obis_code ORDER BY "from", version) AS d
			FROM readings WHERE "from" >= ` + lo + ` AND "from" < ` + hi + `)`,
		`SELECT count(*), sum(value) FROM readings r WHERE "from" >= ` + lo + ` AND EXISTS (SELECT 1 FROM readings q
			WHERE q.malo_id = r.malo_id AND q.obis_code = r.obis_code AND q."from" = r."from" - INTERVAL '1 day')`,
		`SELECT count(*), count(r.value) FROM range(3) k LEFT JOIN readings r ON r."from" < ` + lo + ` AND k.range = 0 WHERE r."from" >= ` + lo,
		`SELECT count(*) FROM (VALUES (1)) k(x) LEFT JOIN readings r ON r."from" < ` + hi + ` WHERE r."from" >= ` + hi + ` OR r."from" IS NULL`,
		`SELECT balancing_day, obis_code, count(*), sum(value) FROM readings WHERE "from" >= ` + lo + ` AND "from" < ` + hi + ` GROUP BY ALL ORDER BY ALL`,
		`SELECT date_trunc('month', balancing_day) AS m, obis_code, sum(value) AS s, count(*) AS n FROM readings
			WHERE "from" >= ` + lo + ` AND "from" < ` + hi + ` GROUP BY 1, 2 ORDER BY 1, 2`,
		`SELECT date_trunc('month', balancing_day) AS m, sum(value) AS s, count(*) AS n FROM readings
			WHERE "from" >= ` + ts(cut) + ` GROUP BY 1 ORDER BY 1`,
		`SELECT date_trunc('month', balancing_day) AS m, sum(value) AS s, count(*) AS n FROM readings
			WHERE "from" >= TIMESTAMP '2025-10-26 02:30' GROUP BY 1 ORDER BY 1`,
		`SELECT "from", value FROM readings WHERE "from" < ` + hi + ` AND malo_id = (SELECT min(malo_id) FROM readings) ORDER BY "from" DESC, obis_code, version LIMIT 5`,
		`SELECT count(*), sum(a.value - b.value) FROM readings a JOIN readings b ON a.malo_id = b.malo_id AND a.obis_code = b.obis_code
			AND b."from" = a."from" + INTERVAL '15 minutes' AND b."from" > '-infinity' WHERE a."from" > '-infinity' AND a."from" < ` + hi,
		`SELECT "from" > '-infinity', "from" <= '-infinity' AS never, count(*) FROM readings WHERE "from" >= ` + lo + ` GROUP BY ALL ORDER BY ALL`,
	} {
		add(q)
	}
	// The latest row per key (DISTINCT ON … ORDER BY [key,] "from" DESC),
	// which reads the cold half only for the keys the hot half lacks: keys
	// every tier holds, keys of one tier only (a balancing day), a LIMIT; and
	// shapes left alone (ascending, an alias named "from", a WHERE, a star).
	// version DESC last: readings_versions holds a key's versions side by side.
	for _, q := range []string{
		`SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM readings ORDER BY malo_id, "from" DESC, obis_code, version DESC`,
		`SELECT DISTINCT ON (obis_code, malo_id) malo_id, obis_code, "from", value, version FROM readings ORDER BY malo_id, obis_code, "from" DESC, version DESC`,
		`SELECT DISTINCT ON (obis_code) obis_code, "from", malo_id, value FROM readings ORDER BY "from" DESC, malo_id, obis_code, version DESC LIMIT 2`,
		`SELECT DISTINCT ON (balancing_day) balancing_day, "from", malo_id, obis_code, value FROM readings
			ORDER BY balancing_day, "from" DESC, malo_id, obis_code, version DESC`,
		`SELECT DISTINCT ON (readings.balancing_day, malo_id) malo_id, readings.balancing_day, "from" AS "from", value FROM readings
			ORDER BY balancing_day DESC, malo_id, readings."from" DESC, obis_code, version DESC`,
		`SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM readings ORDER BY malo_id, "from", obis_code, version DESC`,
		`SELECT DISTINCT ON (malo_id) malo_id, balancing_day AS "from", value FROM readings ORDER BY malo_id, "from" DESC, readings."from", obis_code, version DESC`,
		`SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM readings WHERE "from" < ` + hi + ` ORDER BY malo_id, "from" DESC, obis_code, version DESC`,
		`SELECT malo_id, "from", value FROM (SELECT DISTINCT ON (malo_id) * FROM readings ORDER BY malo_id, "from" DESC, obis_code, version DESC) ORDER BY malo_id`,
	} {
		add(q)
	}
	// A WHERE of the keys alone (taken: it keeps or drops a key's rows in
	// both halves), an alias, a star; a WHERE on another column beside the
	// keys (left alone: it may drop a key's hot rows and keep its cold ones).
	for _, q := range []string{
		`SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM readings WHERE malo_id IN ($1, 'none') ORDER BY malo_id, "from" DESC, obis_code, version DESC`,
		`SELECT DISTINCT ON (malo_id, obis_code) malo_id, obis_code, "from", value, version FROM readings
			WHERE malo_id <> $1 OR obis_code LIKE '%1.29%' ORDER BY malo_id, obis_code, "from" DESC, version DESC`,
		`SELECT DISTINCT ON (r.malo_id) r.malo_id, r."from", r.value FROM readings r WHERE r.malo_id = $1 ORDER BY r.malo_id, r."from" DESC, r.obis_code, r.version DESC`,
		`SELECT malo_id, "from", value FROM (SELECT DISTINCT ON (malo_id) * FROM readings WHERE malo_id >= $1 ORDER BY malo_id, "from" DESC, obis_code, version DESC) ORDER BY malo_id`,
		`SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM readings WHERE malo_id IN ($1, 'none') AND value > 1 ORDER BY malo_id, "from" DESC, obis_code, version DESC`,
	} {
		add(q, malo)
	}
	return out
}

// oracleDuckDB is an in-memory DuckDB in the session's zone whose tables
// readings and readings_versions hold the winners and every version the
// session sees under watermark, with the store's column types.
func oracleDuckDB(t *testing.T, a *archivedStore, s differentialSession, watermark time.Time) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	types := map[string]string{}
	for _, c := range a.cfg.Columns() {
		types[c.Name] = c.Type.DuckDBType()
	}
	cols := []string{"malo_id", "obis_code", "sparte", "from", "value", "version", "balancing_day"}
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = meterstore.QuoteIdent(c) + " " + types[c]
	}
	_, err = db.Exec(`SET TimeZone = '` + s.zone + `'`)
	require.NoError(t, err)
	view := a.oracle.With(s.ceiling)
	sees := func(r meterstore.Row) bool { return s.sees(r, watermark) }
	loadRows(t, db, "readings", defs, sees, view.Winners(time.Time{}, time.Time{}))
	loadRows(t, db, "readings_versions", defs, sees, view.Versions(time.Time{}, time.Time{}))
	return db
}

// loadRows creates table with defs and inserts the rows sees keeps.
func loadRows(t *testing.T, db *sql.DB, table string, defs []string, sees func(meterstore.Row) bool, all []meterstore.Row) {
	t.Helper()
	_, err := db.Exec(`CREATE TABLE ` + table + ` (` + strings.Join(defs, ", ") + `)`)
	require.NoError(t, err)
	var rows []meterstore.Row
	for _, r := range all {
		if sees(r) {
			rows = append(rows, r)
		}
	}
	for len(rows) > 0 {
		n := min(len(rows), 500)
		vals := make([]string, n)
		for i, r := range rows[:n] {
			vals[i] = fmt.Sprintf("('%s', '%s', '%s', TIMESTAMPTZ '%s', %s, %d, DATE '%s')", r.MaloID, r.ObisCode, r.Sparte,
				r.From.UTC().Format("2006-01-02 15:04:05.999999+00"), r.Value.String(), r.Version, r.BalancingDay.Format(time.DateOnly))
		}
		_, err = db.Exec(`INSERT INTO ` + table + ` VALUES ` + strings.Join(vals, ", "))
		require.NoError(t, err)
		rows = rows[n:]
	}
}

// requireSameAsDuckDB: q's answer from e is ref's answer to the same text
// and arguments, or both refuse it.
func requireSameAsDuckDB(t *testing.T, e *engine.Engine, ref *sql.DB, stage, q string, args ...any) {
	t.Helper()
	want, wantErr := referenceRows(ref, q, args)
	res, err := e.Query(context.Background(), q, args...)
	if wantErr != nil {
		require.Error(t, err, "%s: %s %v: DuckDB refuses it (%v)", stage, q, args, wantErr)
		return
	}
	require.NoError(t, err, "%s: %s %v", stage, q, args)
	got := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		got[i] = renderRow(r)
	}
	if !strings.Contains(strings.ToUpper(q), "ORDER BY") {
		sort.Strings(got)
	}
	require.Equal(t, want, got, "%s: %s %v", stage, q, args)
}

func referenceRows(db *sql.DB, q string, args []any) ([]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := []string{}
	for rows.Next() {
		vals, err := engine.ScanValues(rows, len(cols))
		if err != nil {
			return nil, err
		}
		out = append(out, renderRow(vals))
	}
	if !strings.Contains(strings.ToUpper(q), "ORDER BY") {
		sort.Strings(out)
	}
	return out, rows.Err()
}

// renderRow spells a row's values alike whichever driver produced them.
func renderRow(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case decimal.Decimal:
			parts[i] = x.String()
		case time.Time:
			parts[i] = x.UTC().Format(time.RFC3339Nano)
		case nil:
			parts[i] = "NULL"
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return strings.Join(parts, " | ")
}
