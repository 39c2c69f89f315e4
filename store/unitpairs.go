package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
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
// another unit. It reads the unresolved relation through the engine, both
// tiers and every version, two columns of each file.
func (t *Table) UnitPairViolations(ctx context.Context) ([]UnitPairViolation, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	w, err := t.Watermark(ctx)
	if err != nil {
		return nil, err
	}
	pairs := meterstore.UnitPairs()
	allowed := make([]string, len(pairs))
	for i, p := range pairs {
		allowed[i] = "'" + p.String() + "'"
	}
	q := fmt.Sprintf(`SELECT sparte, unit, "from" < $1 AS cold, count(*), min("from"), max("from") FROM %s
		WHERE coalesce(sparte, '') || '/' || coalesce(unit, '') NOT IN (%s)
		GROUP BY ALL ORDER BY ALL`, meterstore.QuoteIdent(t.cfg.Name()), strings.Join(allowed, ", "))
	res, err := t.st.eng.Query(ctx, q, w)
	if err != nil {
		return nil, fmt.Errorf("unit pairs of %s: %w", t.cfg.Name(), err)
	}
	out := make([]UnitPairViolation, 0, len(res.Rows))
	for _, r := range res.Rows {
		v := UnitPairViolation{Pair: meterstore.UnitPair{Sparte: text(r[0]), Unit: text(r[1])}}
		v.Cold, _ = r[2].(bool)
		v.From, _ = r[4].(time.Time)
		v.To, _ = r[5].(time.Time)
		switch n := r[3].(type) {
		case int64:
			v.Rows = n
		default:
			return nil, fmt.Errorf("unit pairs of %s: unexpected count type %T", t.cfg.Name(), r[3])
		}
		out = append(out, v)
	}
	return out, nil
}

// text is a nullable string column's value; "" for NULL.
func text(v any) string {
	s, _ := v.(string)
	return s
}
