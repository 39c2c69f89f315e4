package store

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
)

// BalancingDayMismatch counts the stored rows whose balancing_day is not the
// day metering computes from their "from" and sparte (metering.BalancingDay).
type BalancingDayMismatch struct {
	Rows     int64
	From, To time.Time // the first and the last "from" among them
}

func (m BalancingDayMismatch) String() string {
	return fmt.Sprintf(`%d rows carry a balancing_day that is not the day their "from" and sparte give (from %s to %s): `+
		`meter_balancing_day, meter_balancing_month and balancing_day group them under the stored day`,
		m.Rows, m.From.UTC().Format(time.RFC3339), m.To.UTC().Format(time.RFC3339))
}

// BalancingDayMismatches finds stored rows whose balancing_day is not the
// calendar's day for their "from" and sparte. The store's encoder derives the
// column with that calendar, so only a writer around the store leaves such a
// row; the planner answers meter_balancing_day from the stored column of
// every file that holds it (the stored balancing day pass), so those rows
// group under the writer's day without an error. It reads the unresolved
// relation through the engine, both tiers and every version; the day is
// computed from "from" + INTERVAL 0 SECOND, an argument that is not the
// column itself, which the planner does not rewrite to the stored one.
// Zero Rows: none.
func (t *Table) BalancingDayMismatches(ctx context.Context) (BalancingDayMismatch, error) {
	if err := t.usable(); err != nil {
		return BalancingDayMismatch{}, err
	}
	q := fmt.Sprintf(`SELECT count(*), min("from"), max("from") FROM %s
		WHERE balancing_day IS DISTINCT FROM meter_balancing_day("from" + INTERVAL 0 SECOND, sparte)`,
		meterstore.QuoteIdent(t.cfg.Name()))
	res, err := t.st.eng.Query(ctx, q)
	if err != nil {
		return BalancingDayMismatch{}, fmt.Errorf("balancing days of %s: %w", t.cfg.Name(), err)
	}
	var m BalancingDayMismatch
	if len(res.Rows) != 1 {
		return m, fmt.Errorf("balancing days of %s: %d rows counted, want 1", t.cfg.Name(), len(res.Rows))
	}
	r := res.Rows[0]
	n, ok := r[0].(int64)
	if !ok {
		return m, fmt.Errorf("balancing days of %s: unexpected count type %T", t.cfg.Name(), r[0])
	}
	m.Rows = n
	m.From, _ = r[1].(time.Time)
	m.To, _ = r[2].(time.Time)
	return m, nil
}
