package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
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
// cold half (the engine's cold path: DuckDB's reader, or the Go reader for
// files on object storage without httpfs). A file carrying the mark holds
// allowed pairs only: reading it again would find nothing. Sorted by pair,
// PostgreSQL's rows first.
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
	out, err := unitPairViolations(res.Rows, false)
	if err != nil {
		return nil, fmt.Errorf("unit pairs of %s: %w", t.cfg.Name(), err)
	}
	cold, err := t.uncheckedUnitPairs(ctx)
	if err != nil {
		return nil, fmt.Errorf("unit pairs of %s, files whose pairs the encoder did not check: %w", t.cfg.Name(), err)
	}
	out = append(out, cold...)
	slices.SortStableFunc(out, func(a, b UnitPairViolation) int {
		return cmp.Or(cmp.Compare(a.Pair.Sparte, b.Pair.Sparte), cmp.Compare(a.Pair.Unit, b.Pair.Unit))
	})
	return out, nil
}

// uncheckedUnitPairs counts, per pair, the wrong pairs of the current
// snapshot's cold files below the watermark whose footer does not say the
// encoder checked every row's pair.
func (t *Table) uncheckedUnitPairs(ctx context.Context) ([]UnitPairViolation, error) {
	w, err := t.Watermark(ctx)
	if err != nil {
		return nil, err
	}
	unchecked := func(f catalog.DataFile) (engine.ColdFile, bool) { return engineColdFile(f), f.UncheckedUnitPairs }
	rows, err := t.rereadColdFiles(ctx, unchecked, w, wrongUnitPairs)
	if err != nil {
		return nil, err
	}
	return unitPairViolations(rows, true)
}

// unitPairViolations reads the rows of wrongUnitPairs, of one tier.
func unitPairViolations(rows [][]any, cold bool) ([]UnitPairViolation, error) {
	out := make([]UnitPairViolation, 0, len(rows))
	for _, r := range rows {
		v := UnitPairViolation{Pair: meterstore.UnitPair{Sparte: text(r[0]), Unit: text(r[1])}, Cold: cold}
		var err error
		if v.Rows, v.From, v.To, err = countedSpan(r[2:]); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
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
