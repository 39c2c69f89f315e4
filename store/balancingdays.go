package store

import (
	"context"
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
)

// BalancingDayMismatch counts the stored rows whose balancing_day is not the
// day metering computes from their "from" and sparte (metering.BalancingDay).
type BalancingDayMismatch struct {
	Rows     int64
	From, To time.Time // the first and the last "from" among them
}

func (m BalancingDayMismatch) String() string {
	return fmt.Sprintf(`%d rows carry a balancing_day that is not the day their "from" and sparte give (from %s to %s): `+
		`a query grouping by the stored column counts them under another day; `+
		`rewrite those rows with the calendar's day or remove them`,
		m.Rows, m.From.UTC().Format(time.RFC3339), m.To.UTC().Format(time.RFC3339))
}

// BalancingDayMismatches finds stored rows whose balancing_day is not the
// calendar's day for their "from" and sparte. The store derives the column
// with that calendar on every write — the hot tier's writes and the encoder,
// which says so in each file's footer (catalog.MarkBalancingDay) — so only a
// writer around the store leaves such a row. Queries do not answer from a
// cold file another writer added — the planner computes its day — but other
// engines reading the table do. Only what can differ is read: the hot tier
// through the engine (operational mode, every version, the day computed from
// "from" + INTERVAL 0 SECOND, an argument the planner does not rewrite to the
// stored column), and from the files themselves — read as the engine reads
// a cold half, DuckDB's reader or the Go reader — the stored column of each
// cold file whose footer does not say the encoder derived it. A cold file
// the encoder wrote holds the calendar's day by construction: reading it
// again would convert each of its rows to Berlin's zone to find nothing.
// Zero Rows: none.
func (t *Table) BalancingDayMismatches(ctx context.Context) (BalancingDayMismatch, error) {
	if err := t.usable(); err != nil {
		return BalancingDayMismatch{}, err
	}
	hotOnly, err := t.st.eng.InReadMode(engine.Operational)
	if err != nil {
		return BalancingDayMismatch{}, fmt.Errorf("balancing days of %s: %w", t.cfg.Name(), err)
	}
	res, err := hotOnly.Query(ctx, dayMismatches(meterstore.QuoteIdent(t.cfg.Name())))
	if err != nil {
		return BalancingDayMismatch{}, fmt.Errorf("balancing days of %s: %w", t.cfg.Name(), err)
	}
	m, err := BalancingDayMismatch{}.addCounted(res.Rows)
	if err != nil {
		return m, fmt.Errorf("balancing days of %s: %w", t.cfg.Name(), err)
	}
	// Each file's stored column, not the day the engine computes for a file
	// without the mark.
	underived := func(f catalog.DataFile) (engine.ColdFile, bool) {
		cf := engineColdFile(f)
		cf.BalancingDay = true
		return cf, f.UnderivedBalancingDay
	}
	rows, err := t.rereadColdFiles(ctx, underived, time.Time{}, dayMismatches)
	if err == nil {
		m, err = m.addCounted(rows)
	}
	if err != nil {
		return m, fmt.Errorf("balancing days of %s, files whose day the encoder did not derive: %w", t.cfg.Name(), err)
	}
	return m, nil
}

// dayMismatches counts the rows of relation rel whose balancing_day is not
// the calendar's: rows, first and last "from". The day is computed from
// "from" + INTERVAL 0 SECOND, an argument the planner does not rewrite to
// the stored column (a row whose sparte is no Sparte has no calendar day:
// counted).
func dayMismatches(rel string) string {
	return `SELECT count(*), min("from"), max("from") FROM ` + rel + `
		WHERE balancing_day IS DISTINCT FROM meter_balancing_day("from" + INTERVAL 0 SECOND, sparte)`
}

// addCounted adds to m the counts of dayMismatches' rows.
func (m BalancingDayMismatch) addCounted(rows [][]any) (BalancingDayMismatch, error) {
	for _, r := range rows {
		n, from, to, err := countedSpan(r)
		if err != nil {
			return m, err
		}
		m = m.add(n, from, to)
	}
	return m, nil
}

// add counts n rows from from to to into m.
func (m BalancingDayMismatch) add(n int64, from, to time.Time) BalancingDayMismatch {
	if n == 0 {
		return m
	}
	if m.Rows == 0 || from.Before(m.From) {
		m.From = from
	}
	if m.Rows == 0 || to.After(m.To) {
		m.To = to
	}
	m.Rows += n
	return m
}
