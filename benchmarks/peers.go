package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
)

// The peers are the designs a deployment could pick instead of this store,
// each holding the same readings:
//
//   - PostgreSQL holding the current value of each reading: a table keyed by
//     the resolution key (merge key + version_scope), loaded the way a
//     PostgreSQL-only deployment ingests deliveries — each batch COPYed into a
//     staging table and upserted with ON CONFLICT … DO UPDATE … WHERE
//     excluded.version > version — and aggregated in the database.
//   - DuckLake (DuckDB's ducklake extension) with its catalog in the same
//     PostgreSQL, holding the same current values, written in one INSERT
//     sorted by (malo_id, from): the layout most favourable to it.
//
// Both hold only current values, so they answer without resolution; readings
// resolves versions at query time. The questions are TSBS-like metering
// questions, each timed alternately on the three sides.
const (
	curTable    = "cur_readings"
	curStaging  = "cur_staging"
	lakeCatalog = "lake"
	upsertRows  = 50_000
	// upsertProgress is how many upserted rows the load logs its rate after.
	upsertProgress = 2_000_000
	peerMeters     = 20
	lakeDataPath   = "ducklake-data"
)

// question is one metering question, its SQL taking the relation as %s.
type question struct {
	name     string
	sql      string
	perMeter bool                    // timed over several meters, p50 and p99 reported
	args     func(malo string) []any // bound parameters
}

func (b *bench) peerQuestions() []question {
	year := []any{b.fx.first, b.fx.watermark.Add(hotDays * 24 * time.Hour)}
	mLo, mHi := b.peerMonth()
	meter := func(m string) []any { return append([]any{m}, year...) }
	span := func(string) []any { return year }
	month := func(string) []any { return []any{mLo, mHi} }
	only := func(m string) []any { return []any{m} }
	all := []question{
		{name: "one meter's history, rows", sql: `SELECT "from", obis_code, value FROM %s WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3 ORDER BY "from", obis_code`, perMeter: true, args: meter},
		{name: "one meter's history, daily sums", sql: `SELECT balancing_day, obis_code, sum(value) FROM %s WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3 GROUP BY 1, 2 ORDER BY 1, 2`, perMeter: true, args: meter},
		{name: "one meter's latest reading", sql: `SELECT "from", obis_code, value FROM %s WHERE malo_id = $1 ORDER BY "from" DESC, obis_code LIMIT 1`, perMeter: true, args: only},
		{name: "latest reading of every MaLo (lastpoint)", sql: `SELECT DISTINCT ON (malo_id) malo_id, "from", value FROM %s ORDER BY malo_id, "from" DESC, obis_code`, args: func(string) []any { return nil }},
		{name: "portfolio monthly sums by balancing month", sql: `SELECT date_trunc('month', balancing_day) AS m, sum(value) FROM %s WHERE "from" >= $1 AND "from" < $2 GROUP BY 1 ORDER BY 1`, args: span},
		{name: "ten highest quarter-hours of a month", sql: `SELECT malo_id, obis_code, "from", value FROM %s WHERE "from" >= $1 AND "from" < $2 ORDER BY value DESC, malo_id, obis_code, "from" LIMIT 10`, args: month},
		{name: "completeness of a month", sql: `SELECT malo_id, obis_code, count(*) FROM %s WHERE "from" >= $1 AND "from" < $2 GROUP BY 1, 2 ORDER BY 1, 2`, args: month},
		{name: "one month's rows to the client", sql: `SELECT malo_id, obis_code, "from", value FROM %s WHERE "from" >= $1 AND "from" < $2`, args: month},
	}
	return slices.DeleteFunc(all, func(q question) bool { return !b.o.peersQuestions.MatchString(q.name) })
}

// peerMonth is the last whole Berlin month below the watermark: cold on our side.
func (b *bench) peerMonth() (time.Time, time.Time) {
	w := b.fx.watermark.In(metering.Berlin())
	first := time.Date(w.Year(), w.Month()-1, 1, 0, 0, 0, 0, metering.Berlin())
	return metering.MonthBounds(first.Year(), first.Month(), metering.SparteStrom)
}

// peers loads both peers and times every question on the three sides.
func (b *bench) peers() ([]result, error) {
	if b.o.extensions == "" {
		logf("peers: skipped (no -extensions directory with ducklake; go tool task extensions fills one)")
		return nil, nil
	}
	ingest, _, err := b.phase("PostgreSQL current values", func() ([]result, error) {
		r, err := b.loadCurrentValues()
		return []result{r}, err
	})
	if err != nil {
		return nil, err
	}
	lake, err := store.Open(b.ctx, store.Config{Pool: b.e.pool, Catalog: b.e.cat, Tables: []meterstore.TableConfig{b.cfg},
		Now: func() time.Time { return b.fx.now }, Extensions: engine.Extensions{Directory: b.o.extensions}})
	if err != nil {
		return nil, err
	}
	defer lake.Close()
	_, skipped, err := b.phase("DuckLake", func() ([]result, error) { return nil, b.loadDuckLake(lake) })
	if err == nil && skipped {
		err = b.attachDuckLake(lake)
	}
	if err != nil {
		return nil, err
	}
	if err := b.peersAgree(lake); err != nil {
		return nil, err
	}
	lakeBytes, err := dirBytes(filepath.Join(b.e.dir, lakeDataPath))
	if err != nil {
		return nil, err
	}
	if b.o.buildOnly {
		return append(ingest, b.lakeStorage(lakeBytes)), nil
	}
	out := append(ingest, b.lakeStorage(lakeBytes))
	lakeRun := func(q string, args ...any) (time.Duration, error) {
		return b.runOn(lake.Engine().DB(), q, args...)
	}
	for _, q := range b.peerQuestions() {
		logf("peers: %s", q.name)
		r, err := b.askPeers(q, lakeRun)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, b.explainPeers(lake)
}

// explainPeers writes, per question, our EXPLAIN ANALYZE (the tier split, the
// files kept, how each run was resolved, DuckDB's profile) next to DuckLake's,
// for the first meter where the question is per meter.
func (b *bench) explainPeers(lake *store.Store) error {
	if b.o.peersExplain == "" {
		return nil
	}
	current, err := b.currentColdFiles()
	if err != nil {
		return err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Cold files current (not superseded) below the watermark: %d; DuckLake's data files: %d\n\n", len(current), countFiles(filepath.Join(b.e.dir, lakeDataPath)))
	hot, err := b.hotHalfSplit()
	if err != nil {
		return err
	}
	fmt.Fprintf(&out, "%s\n\n", hot)
	for _, q := range b.peerQuestions() {
		args := q.args(b.fx.malos[0])
		line, err := b.peerFloor(q, args, readParquetOf(current), lake)
		if err != nil {
			return fmt.Errorf("peers: floor of %s: %w", q.name, err)
		}
		fmt.Fprintf(&out, "%s: %s\n", q.name, line)
		ours, err := b.st.Engine().Explain(b.ctx, "EXPLAIN ANALYZE "+fmt.Sprintf(q.sql, "readings"), args...)
		if err != nil {
			return fmt.Errorf("peers: explain %s: %w", q.name, err)
		}
		theirs, err := lakeExplain(b, lake, fmt.Sprintf(q.sql, lakeCatalog+".readings"), args)
		if err != nil {
			return fmt.Errorf("peers: explain %s on DuckLake: %w", q.name, err)
		}
		fmt.Fprintf(&out, "## %s\n\n### readings\n\n%s\n### DuckLake\n\n%s\n", q.name, ours, theirs)
	}
	return os.WriteFile(b.o.peersExplain, []byte(out.String()), 0o644)
}

// currentColdFiles are the cold files a current read keeps (every one but
// those marked superseded), below the watermark.
func (b *bench) currentColdFiles() ([]catalog.DataFile, error) {
	fs, err := b.filesIn(b.fx.first, b.fx.watermark)
	return slices.DeleteFunc(fs, func(f catalog.DataFile) bool { return f.Superseded }), err
}

// peerFloor times one question, alternating, through readings, on DuckLake
// and by hand over read_parquet of the current cold files (no hot tier, no
// resolution: the floor of a cold read through DuckDB).
func (b *bench) peerFloor(q question, args []any, files string, lake *store.Store) (string, error) {
	var ours, lk, raw []time.Duration
	for i := -1; i < b.o.reps; i++ {
		o, err := b.runEngine(fmt.Sprintf(q.sql, "readings"), args...)
		if err != nil {
			return "", err
		}
		l, err := b.runOn(lake.Engine().DB(), fmt.Sprintf(q.sql, lakeCatalog+".readings"), args...)
		if err != nil {
			return "", err
		}
		r, err := b.runRaw(fmt.Sprintf(q.sql, files), args...)
		if err != nil {
			return "", err
		}
		if i >= 0 {
			ours, lk, raw = append(ours, o), append(lk, l), append(raw, r)
		}
	}
	o50, l50, r50 := percentile(ours, 0.5), percentile(lk, 0.5), percentile(raw, 0.5)
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	return fmt.Sprintf("readings %s, DuckLake %s, read_parquet of the current cold files %s (%.2f× DuckLake, %.2f× read_parquet)",
		ms(o50), ms(l50), ms(r50), float64(o50)/float64(l50), float64(o50)/float64(r50)), nil
}

// countFiles counts the regular files under dir.
func countFiles(dir string) int {
	n := 0
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// lakeExplain is DuckDB's EXPLAIN ANALYZE of a statement over DuckLake.
func lakeExplain(b *bench, lake *store.Store, q string, args []any) (string, error) {
	rows, err := lake.Engine().DB().QueryContext(b.ctx, "EXPLAIN ANALYZE "+q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out strings.Builder
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return "", err
		}
		out.WriteString(v + "\n")
	}
	return out.String(), rows.Err()
}

// askPeers times one question on readings, PostgreSQL's current values and
// DuckLake, alternating.
func (b *bench) askPeers(q question, lakeRun func(string, ...any) (time.Duration, error)) (result, error) {
	lakeRel := lakeCatalog + ".readings"
	meters := []string{""}
	reps := b.o.reps
	if q.perMeter {
		meters, reps = b.fx.malos[:min(peerMeters, len(b.fx.malos))], 1
	}
	var ours, pg, lk []time.Duration
	for i := -1; i < reps; i++ {
		for _, m := range meters {
			args := q.args(m)
			o, err := b.runEngine(fmt.Sprintf(q.sql, "readings"), args...)
			if err != nil {
				return result{}, err
			}
			p, err := b.runPG(fmt.Sprintf(q.sql, curTable), args...)
			if err != nil {
				return result{}, err
			}
			l, err := lakeRun(fmt.Sprintf(q.sql, lakeRel), args...)
			if err != nil {
				return result{}, err
			}
			if i >= 0 {
				ours, pg, lk = append(ours, o), append(pg, p), append(lk, l)
			}
		}
	}
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	o50, p50, l50 := percentile(ours, 0.5), percentile(pg, 0.5), percentile(lk, 0.5)
	figure := fmt.Sprintf("%.2f× PostgreSQL, %.2f× DuckLake (%s; PostgreSQL %s; DuckLake %s)",
		float64(o50)/float64(p50), float64(o50)/float64(l50), ms(o50), ms(p50), ms(l50))
	met := o50 <= p50 && o50 <= l50
	if q.perMeter {
		o99, p99, l99 := percentile(ours, 0.99), percentile(pg, 0.99), percentile(lk, 0.99)
		figure += fmt.Sprintf("; p99 %s / %s / %s over %d meters", ms(o99), ms(p99), ms(l99), len(meters))
		met = met && o99 <= p99 && o99 <= l99
	}
	return result{measure: "peers: " + q.name, against: "PostgreSQL holding current values (primary key); DuckLake with the same rows",
		target: "≤ 1.0× both", figure: figure, met: met}, nil
}

// peerIngestSettings are what a PostgreSQL-only deployment upserting tens of
// millions of rows would set, and the benchmark's PostgreSQL (otherwise at
// PostgreSQL's defaults, shared_buffers 256 MB) gets them before the peer
// is loaded. At the default max_wal_size of 1 GB and checkpoint_timeout of
// 5 min, a 35 M-row load (about 500 B a row with its primary key) forces a
// checkpoint every gigabyte of WAL, each followed by full-page images of every
// index leaf page touched again; maintenance_work_mem speeds the VACUUM
// after the load. synchronous_commit stays on: a deployment keeps it, and at
// one commit per batch of 50 000 rows it costs one flush per batch.
var peerIngestSettings = []string{"max_wal_size = '8GB'", "checkpoint_timeout = '30min'", "maintenance_work_mem = '1GB'"}

// upsertWorkMem holds a batch's DISTINCT ON sort (50 000 rows of about
// 300 B) in memory instead of spilling it at the default 4 MB.
const upsertWorkMem = "SET LOCAL work_mem = '64MB'"

// loadCurrentValues builds the PostgreSQL peer from the fixture's deliveries in
// their order, as a PostgreSQL-only deployment would ingest them.
func (b *bench) loadCurrentValues() (result, error) {
	for _, s := range append(peerIngestSettings, "") {
		q := "SELECT pg_reload_conf()"
		if s != "" {
			q = "ALTER SYSTEM SET " + s
		}
		if _, err := b.e.pool.Exec(b.ctx, q); err != nil {
			return result{}, fmt.Errorf("peer's PostgreSQL settings: %s: %w", q, err)
		}
	}
	if err := createRef(b.ctx, b.e, b.cfg, curTable, false); err != nil {
		return result{}, err
	}
	key := meterstore.QuoteIdents(b.cfg.ResolutionKey())
	if _, err := b.e.pool.Exec(b.ctx, fmt.Sprintf(`ALTER TABLE %s ADD PRIMARY KEY (%s); DROP TABLE IF EXISTS %s; CREATE UNLOGGED TABLE %s (LIKE %s)`,
		curTable, key, curStaging, curStaging, curTable)); err != nil {
		return result{}, err
	}
	var sets []string
	for _, c := range b.cfg.ColumnNames() {
		sets = append(sets, fmt.Sprintf("%s = excluded.%s", meterstore.QuoteIdent(c), meterstore.QuoteIdent(c)))
	}
	upsert := fmt.Sprintf(`BEGIN; %s; INSERT INTO %s SELECT DISTINCT ON (%s) * FROM %s ORDER BY %s, version DESC
ON CONFLICT (%s) DO UPDATE SET %s WHERE %s.version < excluded.version; COMMIT`,
		upsertWorkMem, curTable, key, curStaging, key, key, strings.Join(sets, ", "), curTable)
	rows := 0
	start := time.Now()
	flush := func(batch []meterstore.Row) error {
		if _, err := copyRows(b.ctx, b.e, b.cfg, curStaging, batch); err != nil {
			return err
		}
		if _, err := b.e.pool.Exec(b.ctx, upsert); err != nil {
			return fmt.Errorf("upsert into %s: %w", curTable, err)
		}
		if rows/upsertProgress != (rows+len(batch))/upsertProgress {
			logf("peers: %d rows upserted in %s (%.0f rows/s, load %s)", rows+len(batch), time.Since(start).Round(time.Second),
				float64(rows+len(batch))/time.Since(start).Seconds(), loadAverage())
		}
		rows += len(batch)
		_, err := b.e.pool.Exec(b.ctx, "TRUNCATE "+curStaging)
		return err
	}
	logf("peers: upserting the fixture's deliveries into PostgreSQL (%s)", curTable)
	stop := make(chan struct{})
	defer close(stop)
	batches, generated := b.deliveryBatches(upsertRows, stop)
	for batch := range batches {
		if err := flush(batch); err != nil {
			return result{}, err
		}
	}
	if err := <-generated; err != nil {
		return result{}, err
	}
	took := time.Since(start)
	for _, q := range []string{"VACUUM (ANALYZE) " + curTable, "CHECKPOINT"} {
		if _, err := b.e.pool.Exec(b.ctx, q); err != nil {
			return result{}, fmt.Errorf("%s: %w", q, err)
		}
	}
	var size int64
	if err := b.e.pool.QueryRow(b.ctx, "SELECT pg_total_relation_size($1)", curTable).Scan(&size); err != nil {
		return result{}, err
	}
	return result{measure: "peers: PostgreSQL current values, ingest", against: "reported (the peer's own load)", target: "reported",
		figure: fmt.Sprintf("%d delivered rows upserted in %s (%.0f rows/s, batches of %d); %.0f B/row stored", rows, took.Round(time.Second),
			float64(rows)/took.Seconds(), upsertRows, float64(size)/float64(max(1, b.curRows()))), met: true}, nil
}

// deliveryBatches generates the fixture's deliveries in their order, in
// batches of at least n rows, on a goroutine of its own: the upsert of one
// batch overlaps the generation of the next, so the peer's ingest rate is
// PostgreSQL's rather than the workload generator's. Closing stop ends it.
func (b *bench) deliveryBatches(n int, stop <-chan struct{}) (<-chan []meterstore.Row, <-chan error) {
	out, done := make(chan []meterstore.Row, 1), make(chan error, 1)
	go func() {
		defer close(out)
		var batch []meterstore.Row
		send := func() error {
			select {
			case out <- batch:
				batch = nil
				return nil
			case <-stop:
				return errors.New("delivery batches: stopped by their reader")
			}
		}
		err := b.fx.stream(b.w, b.cfg, func(rs []meterstore.Row) error {
			if batch = append(batch, rs...); len(batch) < n {
				return nil
			}
			return send()
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		done <- err
	}()
	return out, done
}

func (b *bench) curRows() int64 {
	var n int64
	_ = b.e.pool.QueryRow(b.ctx, "SELECT count(*) FROM "+curTable).Scan(&n)
	return n
}

// attachDuckLake attaches the DuckLake catalog in the benchmark's PostgreSQL
// to lake's engine.
func (b *bench) attachDuckLake(lake *store.Store) error {
	stmts := []string{"LOAD ducklake", fmt.Sprintf("ATTACH 'ducklake:postgres:%s' AS %s (DATA_PATH '%s', METADATA_SCHEMA 'ducklake')",
		b.peerConn(), lakeCatalog, filepath.Join(b.e.dir, lakeDataPath)+"/")}
	for _, s := range stmts {
		if _, err := lake.Engine().DB().ExecContext(b.ctx, s); err != nil {
			return fmt.Errorf("ducklake: %s: %w", s, err)
		}
	}
	return nil
}

func (b *bench) peerConn() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=postgres", b.e.server.Port)
}

// loadDuckLake creates a DuckLake catalog in the benchmark's PostgreSQL and
// copies the current values into it, sorted. What a stopped load left (its
// catalog schema, its files) is removed first, so a fixture directory's
// rebuild starts clean and DuckLake's bytes are its table's.
func (b *bench) loadDuckLake(lake *store.Store) error {
	if _, err := b.e.pool.Exec(b.ctx, "DROP SCHEMA IF EXISTS ducklake CASCADE"); err != nil {
		return fmt.Errorf("ducklake: drop a stopped load's catalog: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(b.e.dir, lakeDataPath)); err != nil {
		return err
	}
	if _, err := lake.Engine().DB().ExecContext(b.ctx, "LOAD postgres_scanner"); err != nil {
		return fmt.Errorf("ducklake: LOAD postgres_scanner: %w", err)
	}
	logf("peers: loading DuckLake (catalog in PostgreSQL, data in %s)", filepath.Join(b.e.dir, lakeDataPath))
	if err := b.attachDuckLake(lake); err != nil {
		return err
	}
	cols := strings.Join(quoted(b.cfg.ColumnNames()), ", ")
	stmts := []string{
		fmt.Sprintf("ATTACH '%s' AS peer_pg (TYPE postgres, READ_ONLY)", b.peerConn()),
		fmt.Sprintf(`CREATE OR REPLACE TABLE %s.readings AS SELECT %s FROM peer_pg.public.%s ORDER BY malo_id, "from", obis_code`, lakeCatalog, cols, curTable),
		"DETACH peer_pg",
	}
	for _, s := range stmts {
		if _, err := lake.Engine().DB().ExecContext(b.ctx, s); err != nil {
			return fmt.Errorf("ducklake: %s: %w", s, err)
		}
	}
	return nil
}

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) (int64, error) {
	var bytes int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			bytes += fi.Size()
		}
		return err
	})
	return bytes, err
}

// lakeStorage compares the bytes of our current cold files with DuckLake's.
func (b *bench) lakeStorage(lakeBytes int64) result {
	var ours int64
	fs, err := b.filesIn(b.fx.first, b.fx.watermark)
	for _, f := range fs {
		if !f.Superseded {
			ours += f.SizeBytes
		}
	}
	cur := b.curRows()
	r := result{measure: "peers: storage", against: "DuckLake's files holding the current values", target: "≤ 1.05× DuckLake's files",
		figure: fmt.Sprintf("%.2f B/row ours (every version, cold) vs %.2f B/row DuckLake (current values, hot week included)",
			float64(ours)/float64(max(1, b.fx.coldRows)), float64(lakeBytes)/float64(max(1, cur)))}
	if err != nil {
		r.figure = "not measured: " + err.Error()
		return r
	}
	r.met = float64(ours)/float64(max(1, b.fx.coldRows)) <= 1.05*float64(lakeBytes)/float64(max(1, cur))
	return r
}

// peersAgree checks the three sides hold the same current values before any
// of them is timed: a faster wrong peer would prove nothing.
func (b *bench) peersAgree(lake *store.Store) error {
	const q = `SELECT count(*)::BIGINT, sum(value)::VARCHAR FROM %s`
	res, err := b.st.Query(b.ctx, fmt.Sprintf(q, "readings"))
	if err != nil {
		return err
	}
	ours := fmt.Sprintf("%v %v", res.Rows[0]...)
	var n int64
	var s string
	if err := b.e.pool.QueryRow(b.ctx, `SELECT count(*), sum(value)::text FROM `+curTable).Scan(&n, &s); err != nil {
		return err
	}
	pg := fmt.Sprintf("%v %v", n, s)
	if err := lake.Engine().DB().QueryRowContext(b.ctx, fmt.Sprintf(q, lakeCatalog+".readings")).Scan(&n, &s); err != nil {
		return err
	}
	lk := fmt.Sprintf("%v %v", n, s)
	if ours != pg || ours != lk {
		return fmt.Errorf("peers disagree on count and sum: readings %s, PostgreSQL current values %s, DuckLake %s", ours, pg, lk)
	}
	logf("peers: all three hold %s (count, sum)", ours)
	return nil
}
