package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
)

// extensionPaths measures each half's two paths side by side, alternating,
// on the same data: the hot half through meter_hot_scan (Go, pgx pages)
// against the postgres extension's postgres_query and binary COPY; the cold
// half through the planned read_parquet list against the iceberg extension's
// iceberg_scan, for an aggregate and for single meters; and readings against
// what a user would write by hand in raw DuckDB with both extensions attached.
// The engine's default per half (engine/paths.go) is the faster path here.
func (b *bench) extensionPaths() ([]result, error) {
	if b.o.extensions == "" {
		logf("extension paths: skipped (no -extensions directory; go tool task extensions fills one)")
		return nil, nil
	}
	ext, err := store.Open(b.ctx, store.Config{Pool: b.e.pool, Catalog: b.e.cat, Tables: []meterstore.TableConfig{b.cfg},
		Now:        func() time.Time { return b.fx.now },
		Extensions: engine.Extensions{Directory: b.o.extensions, Hot: engine.PathExtension, Cold: engine.PathExtension}})
	if err != nil {
		return nil, err
	}
	defer ext.Close()
	goPath := func(q string) func() (time.Duration, error) {
		return func() (time.Duration, error) { return b.runEngine(q) }
	}
	extPath := func(q string) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			start := time.Now()
			if _, err := ext.Query(b.ctx, q); err != nil {
				return 0, fmt.Errorf("%s: %w", q, err)
			}
			return time.Since(start), nil
		}
	}
	var out []result
	pair := func(measure, against, q string, reps int) error {
		g, x, err := b.timePair(reps, goPath(q), extPath(q))
		if err != nil {
			return err
		}
		faster := "Go path"
		if x < g {
			faster = "extension"
		}
		r := result{measure: measure, against: against, target: "the faster is the default",
			figure: fmt.Sprintf("%.2f× (%s vs %s); faster: %s", float64(x)/float64(g), x.Round(time.Millisecond), g.Round(time.Millisecond), faster), met: true}
		// The extension's store takes iceberg_scan only where the half's
		// read allows it; the note says which path it took.
		if explain, err := ext.Engine().Explain(b.ctx, q); err == nil {
			r.note = firstLine(explain, "cold:")
		}
		out = append(out, r)
		return nil
	}

	w := ts(b.fx.watermark)
	hotQ := b.hotScanSQL()
	logf("extension paths: hot scan, %d rows", b.fx.hotRows)
	if err := pair("hot scan: postgres_query (postgres extension)", "meter_hot_scan (Go table function over pgx)", hotQ, b.o.reps); err != nil {
		return nil, err
	}
	x, c, err := b.timePair(b.o.reps, extPath(hotQ), b.copyHotWeek)
	if err != nil {
		return nil, err
	}
	rps := func(d time.Duration) float64 { return float64(b.fx.hotRows) / d.Seconds() }
	out = append(out, result{measure: "hot scan: postgres_query throughput", against: "COPY (SELECT …) TO STDOUT (FORMAT binary) of the same rows",
		target: "reported", figure: fmt.Sprintf("%.2f× (%.0f vs %.0f rows/s)", float64(c)/float64(x), rps(x), rps(c)), met: true})

	rng := fmt.Sprintf(`"from" >= %s AND "from" < %s`, ts(b.fx.first), w)
	logf("extension paths: cold aggregate and single meter")
	if err := pair("cold aggregate: iceberg_scan (iceberg extension)", "read_parquet of the planned files",
		`SELECT sum(value), count(*) FROM readings WHERE `+rng, b.o.reps); err != nil {
		return nil, err
	}
	meter := fmt.Sprintf(`SELECT "from", value FROM readings WHERE malo_id = '%s' AND %s ORDER BY "from"`, b.fx.malos[0], rng)
	if err := pair("single meter, cold: iceberg_scan", "read_parquet of the planned files", meter, 3*b.o.reps); err != nil {
		return nil, err
	}

	// The natural peer: both extensions attached in raw DuckDB, the watermark
	// split and ROW_NUMBER resolution written by hand, no planner.
	meta := b.table().Cold().Iceberg().MetadataLocation()
	cols := strings.Join(quoted(b.cfg.ColumnNames()), ", ")
	tiers := fmt.Sprintf(`SELECT %s FROM iceberg_scan('%s') WHERE "from" < %s UNION ALL SELECT %s FROM meterstore_hot.public.%s WHERE "from" >= %s`,
		cols, meta, w, cols, meterstore.QuoteIdent(b.cfg.Name()), w)
	byHand := `SELECT sum(value), count(*) FROM (` + b.cfg.RenderResolution("("+tiers+") AS src") + `) AS r`
	logf("extension paths: readings against the hand-written UNION ALL")
	ours, hand, err := b.timePair(b.o.reps, goPath(`SELECT sum(value), count(*) FROM readings`), func() (time.Duration, error) {
		start := time.Now()
		rows, err := ext.Engine().DB().QueryContext(b.ctx, byHand)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", byHand, err)
		}
		for rows.Next() {
		}
		rows.Close()
		return time.Since(start), rows.Err()
	})
	if err != nil {
		return nil, err
	}
	out = append(out, ratioResult("readings, every row resolved (default paths)",
		"raw DuckDB with both extensions attached: iceberg_scan UNION ALL the attached hot table at the watermark, ROW_NUMBER resolution by hand",
		"≤ 1.0×", ours, hand, 1.0, ""))
	return out, nil
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = meterstore.QuoteIdent(n)
	}
	return out
}
