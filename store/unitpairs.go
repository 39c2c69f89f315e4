package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/engine/plan"
)

// UnitPairViolation counts the stored rows of one (sparte, unit) pair
// metering does not allow (meterstore.UnitPairs), in one tier.
type UnitPairViolation struct {
	Pair     meterstore.UnitPair
	Cold     bool // below the watermark: in Iceberg (a foreign writer's file, or archived from a table created before the hot tier's CHECK)
	Rows     int64
	From, To time.Time // the first and the last "from" among them
}

func (v UnitPairViolation) String() string {
	tier := "PostgreSQL"
	if v.Cold {
		tier = "the cold tier"
	}
	return fmt.Sprintf("%d rows in %s carry sparte %s in unit %s (from %s to %s): %v",
		v.Rows, tier, v.Pair.Sparte, v.Pair.Unit, v.From.UTC().Format(time.RFC3339), v.To.UTC().Format(time.RFC3339),
		meterstore.CheckUnitPair(v.Pair.Sparte, v.Pair.Unit))
}

// UnitPairViolations finds stored rows whose unit their Sparte cannot have —
// rows no write path of the store lets in (the hot tier's unit_of_sparte
// CHECK, the cold write paths' validation), so a writer around the store put
// them there, and every SQL sum over the Sparte adds them to values in
// another unit. Only what can hold one is read, every version: the hot tier
// through the engine (operational mode), and the cold files whose footer
// does not say the encoder checked every row's pair
// (catalog.MarkUnitPairs) — another writer's, an older encoder's, or one
// archived from a table that held a wrong pair — read as the engine reads a
// cold file. A file carrying the mark holds allowed pairs only: reading it
// again would find nothing. Sorted by pair, PostgreSQL's rows first.
func (t *Table) UnitPairViolations(ctx context.Context) ([]UnitPairViolation, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	hotOnly, err := t.st.eng.InReadMode(engine.Operational)
	if err != nil {
		return nil, fmt.Errorf("unit pairs of %s: %w", t.cfg.Name(), err)
	}
	res, err := hotOnly.Query(ctx, wrongUnitPairs(meterstore.QuoteIdent(t.cfg.Name())))
	if err != nil {
		return nil, fmt.Errorf("unit pairs of %s: %w", t.cfg.Name(), err)
	}
	out := make([]UnitPairViolation, 0, len(res.Rows))
	for _, r := range res.Rows {
		v := UnitPairViolation{Pair: meterstore.UnitPair{Sparte: text(r[0]), Unit: text(r[1])}}
		v.From, _ = r[3].(time.Time)
		v.To, _ = r[4].(time.Time)
		switch n := r[2].(type) {
		case int64:
			v.Rows = n
		default:
			return nil, fmt.Errorf("unit pairs of %s: unexpected count type %T", t.cfg.Name(), r[2])
		}
		out = append(out, v)
	}
	cold, err := t.uncheckedUnitPairs(ctx)
	if err != nil {
		return nil, err
	}
	out = append(out, cold...)
	slices.SortStableFunc(out, func(a, b UnitPairViolation) int {
		return cmp.Or(cmp.Compare(a.Pair.Sparte, b.Pair.Sparte), cmp.Compare(a.Pair.Unit, b.Pair.Unit))
	})
	return out, nil
}

// uncheckedUnitPairs counts, per pair, the wrong pairs of the current
// snapshot's cold files below the watermark whose footer does not say the
// encoder checked every row's pair: local files read with the engine's own
// database, files on object storage with the Go reader.
func (t *Table) uncheckedUnitPairs(ctx context.Context) ([]UnitPairViolation, error) {
	w, err := t.Watermark(ctx)
	if err != nil {
		return nil, err
	}
	files, _, err := t.cold.PlanFiles(ctx, catalog.PlanRequest{})
	if err != nil {
		return nil, fmt.Errorf("unit pairs of %s: %w", t.cfg.Name(), err)
	}
	var local []engine.ColdFile
	var remote []string
	for _, f := range files {
		switch {
		case !f.UncheckedUnitPairs:
		case onObjectStorage(f.Path):
			remote = append(remote, f.Path)
		default:
			local = append(local, engineColdFile(f))
		}
	}
	out, err := t.localUnitPairs(ctx, local, w)
	if err == nil {
		out, err = t.remoteUnitPairs(ctx, remote, w, out)
	}
	if err != nil {
		return nil, fmt.Errorf("unit pairs of %s, files whose pairs the encoder did not check: %w", t.cfg.Name(), err)
	}
	return out, nil
}

// localUnitPairs counts the wrong pairs of local files below w through the
// cold half's read_parquet relation.
func (t *Table) localUnitPairs(ctx context.Context, files []engine.ColdFile, w time.Time) ([]UnitPairViolation, error) {
	if len(files) == 0 {
		return nil, nil
	}
	rows, err := t.st.eng.DB().QueryContext(ctx, wrongUnitPairs("("+plan.FilesRelation(t.cfg, files, w)+")"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UnitPairViolation
	for rows.Next() {
		var sparte, unit sql.NullString
		var from, to sql.NullTime
		v := UnitPairViolation{Cold: true}
		if err := rows.Scan(&sparte, &unit, &v.Rows, &from, &to); err != nil {
			return nil, err
		}
		v.Pair = meterstore.UnitPair{Sparte: sparte.String, Unit: unit.String}
		v.From, v.To = from.Time, to.Time
		out = append(out, v)
	}
	return out, rows.Err()
}

// remoteUnitPairs adds to out the wrong pairs of files on object storage
// below w, folded in Go with the pairs wrongUnitPairs allows.
func (t *Table) remoteUnitPairs(ctx context.Context, paths []string, w time.Time, out []UnitPairViolation) ([]UnitPairViolation, error) {
	allowed := map[meterstore.UnitPair]bool{}
	for _, p := range meterstore.UnitPairs() {
		allowed[p] = true
	}
	err := t.foldFiles(ctx, paths, func(r *meterstore.Row) {
		pair := meterstore.UnitPair{Sparte: r.Sparte, Unit: r.Unit}
		if r.From.Before(w) && !allowed[pair] {
			out = addViolation(out, UnitPairViolation{Pair: pair, Cold: true, Rows: 1, From: r.From, To: r.From})
		}
	})
	return out, err
}

// addViolation counts v into out's entry of its pair and tier.
func addViolation(out []UnitPairViolation, v UnitPairViolation) []UnitPairViolation {
	for i := range out {
		if o := &out[i]; o.Pair == v.Pair && o.Cold == v.Cold {
			o.Rows += v.Rows
			if v.From.Before(o.From) {
				o.From = v.From
			}
			if v.To.After(o.To) {
				o.To = v.To
			}
			return out
		}
	}
	return append(out, v)
}

// wrongUnitPairs counts the rows of relation rel whose (sparte, unit) pair
// metering does not allow, per pair: sparte, unit, rows, first and last
// "from".
func wrongUnitPairs(rel string) string {
	pairs := meterstore.UnitPairs()
	allowed := make([]string, len(pairs))
	for i, p := range pairs {
		allowed[i] = "'" + p.String() + "'"
	}
	return fmt.Sprintf(`SELECT sparte, unit, count(*), min("from"), max("from") FROM %s
		WHERE coalesce(sparte, '') || '/' || coalesce(unit, '') NOT IN (%s)
		GROUP BY ALL ORDER BY ALL`, rel, strings.Join(allowed, ", "))
}

// text is a nullable string column's value; "" for NULL.
func text(v any) string {
	s, _ := v.(string)
	return s
}
