package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/testrig/s3local"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// objectStoreDays is the history the object-store comparison archives into
// each warehouse: enough windows that per-request latency and throughput both
// show, small enough to load twice in a few minutes.
const objectStoreDays = 14

// warehouseStore is one store of the comparison: its own database in the
// benchmark's PostgreSQL and its own warehouse.
type warehouseStore struct {
	name string
	pool *pgxpool.Pool
	cat  *catalog.Catalog
	st   *store.Store
}

func (w *warehouseStore) close() {
	if w.st != nil {
		w.st.Close()
	}
	if w.cat != nil {
		w.cat.Close()
	}
	if w.pool != nil {
		w.pool.Close()
	}
}

// objectStore: the same rows archived into a file:// warehouse and an s3://
// warehouse on a private SeaweedFS (loopback, same disk), then the same reads
// of both, alternated: archival throughput, the cold aggregate and one meter's
// series — s3:// read by the Go reader (meter_cold_scan) and, where the
// extensions are installed, by DuckDB's httpfs — with DuckDB's caches on and
// off (parquet_metadata_cache, Parquet footers; enable_http_metadata_cache,
// httpfs's object metadata).
func (b *bench) objectStore() ([]result, error) {
	srv, err := s3local.Start(b.ctx, "meterstore-bench")
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	w := testkit.Fixture(b.o.seed + 1)
	w.MaLos, w.Days, w.CorrectionRate = b.o.malos, objectStoreDays, b.o.corrections
	w.Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	batch, err := w.Generate()
	if err != nil {
		return nil, err
	}
	var rows []meterstore.Row
	for _, d := range batch.Deliveries {
		rs, err := cfg.Encode(d.Series)
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	now := w.Start.Add(time.Duration(objectStoreDays+30) * 24 * time.Hour)
	sides := []struct{ name, warehouse string }{
		{"file", b.e.warehouse + "-os-file"},
		{"s3", "s3://" + srv.Bucket + "/warehouse"},
	}
	stores := make([]*warehouseStore, len(sides))
	defer func() {
		for _, s := range stores {
			if s != nil {
				s.close()
			}
		}
	}()
	var archived [2]time.Duration
	for i, side := range sides {
		s, err := b.openWarehouseStore(side.name, side.warehouse, srv, cfg, now)
		if err != nil {
			return nil, err
		}
		stores[i] = s
		tbl := s.st.Tables()[0]
		for rest := rows; len(rest) > 0; {
			n := min(len(rest), 20000)
			if _, err := tbl.Hot().Write(b.ctx, rest[:n]); err != nil {
				return nil, err
			}
			rest = rest[n:]
		}
		start := time.Now()
		if _, err := tbl.Archive(b.ctx, now, 0); err != nil {
			return nil, fmt.Errorf("archive into %s: %w", side.warehouse, err)
		}
		archived[i] = time.Since(start)
	}
	rate := func(d time.Duration) string { return fmt.Sprintf("%.0f k rows/s", float64(len(rows))/d.Seconds()/1000) }
	out := []result{{measure: fmt.Sprintf("archival into s3:// (%d rows, %d daily windows)", len(rows), objectStoreDays),
		against: "the same rows archived into file://, same run", target: "report",
		figure: fmt.Sprintf("%.2f× the time (%s vs %s; %s vs %s)", float64(archived[1])/float64(archived[0]),
			archived[1].Round(time.Millisecond), archived[0].Round(time.Millisecond), rate(archived[1]), rate(archived[0])), met: true}}
	readers := []struct {
		name string
		st   *store.Store
	}{{"Go reader", stores[1].st}}
	if b.o.extensions != "" {
		httpfs, err := store.Open(b.ctx, store.Config{Pool: stores[1].pool, Catalog: stores[1].cat, Tables: []meterstore.TableConfig{cfg},
			Now: func() time.Time { return now }, Extensions: engine.Extensions{Directory: b.o.extensions}})
		if err != nil {
			return nil, err
		}
		defer httpfs.Close()
		if got := httpfs.Engine().Extensions().ObjectStore; !strings.Contains(got, "httpfs") {
			return nil, fmt.Errorf("object store: httpfs not in use (%s)", httpfs.Engine().Extensions())
		}
		readers = append(readers, struct {
			name string
			st   *store.Store
		}{"httpfs", httpfs})
	}
	malo := rows[0].MaloID
	queries := []struct{ what, sql string }{
		{"cold aggregate", `SELECT sum(value), count(*) FROM readings`},
		{"single meter", `SELECT "from", value FROM readings WHERE malo_id = '` + malo + `' ORDER BY "from"`},
	}
	for _, cache := range []bool{true, false} {
		for _, st := range []*store.Store{stores[0].st, readers[len(readers)-1].st} {
			if err := setCaches(b.ctx, st, cache); err != nil {
				return nil, err
			}
		}
		for _, r := range readers {
			for _, q := range queries {
				f, o, err := b.timePair(b.o.reps, timeQuery(b.ctx, stores[0].st, q.sql), timeQuery(b.ctx, r.st, q.sql))
				if err != nil {
					return nil, err
				}
				out = append(out, result{measure: fmt.Sprintf("%s over s3:// by the %s (caches %s)", q.what, r.name, onOff(cache)),
					against: "the same statement over file://, same run", target: "report",
					figure: fmt.Sprintf("%.2f× (%s vs %s)", float64(o)/float64(f), o.Round(time.Millisecond), f.Round(time.Millisecond)), met: true,
					note: "s3:// read through " + coldPathOf(b.ctx, r.st, q.sql)})
			}
		}
	}
	return out, nil
}

// setCaches turns DuckDB's Parquet metadata cache, and httpfs's object
// metadata cache where httpfs is loaded, on or off.
func setCaches(ctx context.Context, st *store.Store, on bool) error {
	qs := []string{fmt.Sprintf("SET GLOBAL parquet_metadata_cache = %v", on)}
	if strings.Contains(st.Engine().Extensions().ObjectStore, "httpfs") {
		qs = append(qs, fmt.Sprintf("SET GLOBAL enable_http_metadata_cache = %v", on))
	}
	for _, q := range qs {
		if _, err := st.Engine().DB().ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func timeQuery(ctx context.Context, st *store.Store, q string) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		start := time.Now()
		if _, err := st.Query(ctx, q); err != nil {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
		return time.Since(start), nil
	}
}

// coldPathOf names the table function the cold half ran through, from EXPLAIN.
func coldPathOf(ctx context.Context, st *store.Store, q string) string {
	text, err := st.Engine().Explain(ctx, q)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, p := range []string{"meter_cold_scan", "read_parquet"} {
		if strings.Contains(text, p) {
			return p
		}
	}
	return "unknown"
}

// openWarehouseStore creates a database for one side and opens a store on it.
func (b *bench) openWarehouseStore(name, warehouse string, srv *s3local.Server, cfg meterstore.TableConfig, now time.Time) (*warehouseStore, error) {
	db := "bench_os_" + name
	if _, err := b.e.pool.Exec(b.ctx, "CREATE DATABASE "+db); err != nil {
		return nil, err
	}
	if dir, ok := strings.CutPrefix(warehouse, "file://"); ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	s := &warehouseStore{name: name}
	dsn := b.e.server.DSN(db)
	var err error
	if s.pool, err = pgxpool.New(b.ctx, dsn); err != nil {
		return nil, err
	}
	opt := catalog.Options{DSN: dsn, Warehouse: warehouse, Pool: s.pool}
	if name == "s3" {
		opt.S3 = srv.Settings()
	}
	if s.cat, err = catalog.Open(b.ctx, opt); err != nil {
		s.close()
		return nil, err
	}
	if s.st, err = store.Open(b.ctx, store.Config{Pool: s.pool, Catalog: s.cat, Tables: []meterstore.TableConfig{cfg}, Now: func() time.Time { return now }}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}
