package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/metering"
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
// stored column), and from the files themselves the stored column of each
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
	q := fmt.Sprintf(`SELECT count(*), min("from"), max("from") FROM %s
		WHERE balancing_day IS DISTINCT FROM meter_balancing_day("from" + INTERVAL 0 SECOND, sparte)`,
		meterstore.QuoteIdent(t.cfg.Name()))
	res, err := hotOnly.Query(ctx, q)
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
	return t.underivedDayMismatches(ctx, m)
}

// underivedDayMismatches adds to m the rows of the current snapshot's cold
// files holding a balancing_day the encoder did not say it derived (another
// writer's, or a compaction's from before the encoder derived the column)
// whose stored day is not the calendar's, read from the files themselves
// (as another engine would read them): local ones by column name with the
// engine's own database, those on object storage with the Go reader.
func (t *Table) underivedDayMismatches(ctx context.Context, m BalancingDayMismatch) (BalancingDayMismatch, error) {
	files, _, err := t.cold.PlanFiles(ctx, catalog.PlanRequest{})
	if err != nil {
		return m, fmt.Errorf("balancing days of %s: %w", t.cfg.Name(), err)
	}
	var paths, remote []string
	for _, f := range files {
		switch {
		case !f.UnderivedBalancingDay:
		case onObjectStorage(f.Path):
			remote = append(remote, f.Path)
		default:
			paths = append(paths, sqltext.String(f.Path))
		}
	}
	m, err = t.remoteDayMismatches(ctx, remote, m)
	if err != nil || len(paths) == 0 {
		return m, err
	}
	q := `SELECT count(*), min("from"), max("from") FROM read_parquet([` + strings.Join(paths, ", ") + `], union_by_name = true)
		WHERE balancing_day IS DISTINCT FROM meter_balancing_day(CAST("from" AS TIMESTAMPTZ), CAST(sparte AS VARCHAR))`
	var n int64
	var from, to sql.NullTime
	if err := t.st.eng.DB().QueryRowContext(ctx, q).Scan(&n, &from, &to); err != nil {
		return m, fmt.Errorf("balancing days of %s, files whose day the encoder did not derive: %w", t.cfg.Name(), err)
	}
	return m.add(n, from.Time, to.Time), nil
}

// remoteDayMismatches adds to m the rows of files on object storage whose
// stored day is not the calendar's, folded in Go (a row whose sparte is no
// Sparte has no calendar day: counted).
func (t *Table) remoteDayMismatches(ctx context.Context, paths []string, m BalancingDayMismatch) (BalancingDayMismatch, error) {
	err := t.foldFiles(ctx, paths, func(r *meterstore.Row) {
		s, err := metering.ParseSparte(r.Sparte)
		if err != nil || !r.BalancingDay.Equal(metering.BalancingDay(r.From, s).Time()) {
			m = m.add(1, r.From, r.From)
		}
	})
	if err != nil {
		return m, fmt.Errorf("balancing days of %s, files whose day the encoder did not derive: %w", t.cfg.Name(), err)
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
