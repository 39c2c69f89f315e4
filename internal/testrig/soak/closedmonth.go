package soak

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// closedMonth is one day of the month before the workload's first month,
// delivered once the watermark has closed that month: its rows go straight
// to Iceberg as late data, and msql maintenance --compact compacts the month
// while the faults go on — whatever the date, a run of any length compacts.
type closedMonth struct {
	month      time.Time // first instant (UTC) of the month the day lies in
	deliveries []testkit.Delivery
	closed     time.Time // when the watermark was seen past the month
	delivered  time.Time // when the last delivery was stored (zero: not all were)
}

// closedMonthDeliveries bounds the closed month's deliveries: each is a cold
// commit, and the month must be written and compacted early in a 90 s run.
const closedMonthDeliveries = 6

// newClosedMonth generates the day two days before the first of the
// workload's first month, from the workload's seed and portfolio (its first
// deliveries): all of its quarter-hours lie in that month in UTC too.
func newClosedMonth(w testkit.Workload) (*closedMonth, error) {
	first := metering.LocalDay(w.Start)
	day := metering.Date{Year: first.Year, Month: first.Month, Day: 1}.AddDays(-2)
	from, _ := metering.DayBounds(day, metering.SparteStrom)
	w.Start, w.Days = from, 1
	c := &closedMonth{month: time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)}
	err := w.Stream(func(d testkit.Delivery) error {
		if len(c.deliveries) < closedMonthDeliveries {
			c.deliveries = append(c.deliveries, d)
		}
		return nil
	})
	return c, err
}

// deliver waits until the watermark has passed the month, then writes the
// day's deliveries through the writers' ledger, each under the lock of the
// writer that owns its MaLo.
func (c *closedMonth) deliver(ctx context.Context, tbl *store.Table, l *ledger, today time.Time, st *stats) {
	next := c.month.AddDate(0, 1, 0)
	for {
		wm, err := tbl.Watermark(ctx)
		if err == nil && !wm.Before(next) {
			c.closed = time.Now()
			break
		}
		if ctx.Err() != nil {
			st.fail(fmt.Sprintf("the watermark never passed %s: the closed month's day was not delivered", next.Format(time.RFC3339)))
			return
		}
		sleep(ctx, 500*time.Millisecond)
	}
	for _, x := range c.deliveries {
		if ctx.Err() != nil {
			st.fail(fmt.Sprintf("the run ended before the closed month's day was delivered (the watermark passed %s at %s)", next.Format(time.RFC3339), c.closed.Format(time.TimeOnly)))
			return
		}
		wr := &writer{id: l.owner(x.Series.MaloID.String()), tbl: tbl, ledger: l, today: today, stats: st}
		wr.deliver(ctx, delivery{Delivery: x})
	}
	c.delivered = time.Now()
}

// check: every partition of the month was compacted by the scheduled msql
// maintenance after the last delivery to it (the recovery run does not
// compact). Late rows of the workload's own may land in the month after
// that — its first Berlin day starts in it in UTC when the day is the 1st — and
// are compacted by a later run or left for the next. maintenanceLog counts the
// compactions.
func (c *closedMonth) check(ctx context.Context, tbl *store.Table, start time.Time, maintenanceLog string, st *stats, pass func(string, ...any)) {
	name := c.month.Format("2006-01")
	if c.delivered.IsZero() {
		return // deliver said why
	}
	parts, err := tbl.Cold().Partitions(ctx)
	if err != nil {
		st.fail("list the cold partitions: " + err.Error())
		return
	}
	var n, files, compacted int
	var rows int64
	var first time.Time
	for _, p := range parts {
		if !p.Month.Equal(c.month) {
			continue
		}
		n++
		files += p.Files
		rows += p.Rows
		if p.Compacted {
			compacted++
		}
		switch {
		case !p.Closed:
			st.fail(fmt.Sprintf("partition %s is not closed at the end of the run", p.Name))
		case p.LastCompaction == nil || p.LastCompaction.Before(c.delivered):
			st.fail(fmt.Sprintf("partition %s of the closed month was not compacted by msql maintenance after the closed month's day was delivered %s into the run (%d files)",
				p.Name, c.delivered.Sub(start).Round(time.Second), p.Files))
		case first.IsZero() || p.LastCompaction.Before(first):
			first = *p.LastCompaction
		}
	}
	if n == 0 {
		st.fail("the closed month " + name + " has no partition in the cold tier")
		return
	}
	if !first.IsZero() {
		runs := strings.Count(maintenanceLog, "from_month="+name+": ")
		pass("the closed month %s (closed by the watermark %s into the run, %d deliveries written below it, the last at %s) compacted by msql maintenance %d times during the run, each of its %d partitions last at %s or later; at the end %d files, %d of the partitions wholly compacted, %d rows; every answer and sum below read after it",
			name, c.closed.Sub(start).Round(time.Second), len(c.deliveries), c.delivered.Sub(start).Round(time.Second), runs, n,
			first.Sub(start).Round(time.Second), files, compacted, rows)
	}
}
