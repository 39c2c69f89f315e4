package testkit

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

// CompletenessRow is one series' completeness over a range of balancing
// days, the columns of meter_completeness.
type CompletenessRow struct {
	MaloID   string
	ObisCode string
	// MeloID is set when the table identifies by MeLo.
	MeloID *string
	// Identity holds the identity columns' values, in IdentityColumns order.
	Identity   []string
	Sparte     string
	Resolution string
	// Expected is the sum over the range's balancing days of
	// metering.ExpectedIntervals for the series' resolution and Sparte
	// (92/96/100 at PT15M, 1380/1440/1500 at PT1M).
	Expected int
	// Actual is the number of resolved rows on those days.
	Actual int
	// Missing sums per-day shortfalls and Surplus per-day excesses; they are
	// never netted against each other.
	Missing, Surplus int
	// FirstGap is the first balancing day with fewer rows than expected; zero
	// when none.
	FirstGap metering.Date
	// Substituted counts SUBSTITUTED rows; NotBillable rows whose quality is
	// not billable (metering.Quality.IsBillable).
	Substituted, NotBillable int
	// Complete is Missing == 0 && Surplus == 0.
	Complete bool
}

type seriesAcc struct {
	row    CompletenessRow
	sparte metering.Sparte
	res    metering.Resolution
	perDay map[metering.Date]int
}

// Completeness reports, per series (malo_id, obis_code [, melo_id]
// [, identity columns], resolution), how many resolved rows fall on each
// balancing day d with from ≤ d < to — each row on its own Sparte's day, gas
// 06:00 to 06:00 — against the DST-aware expectation. Only series with at
// least one resolved row in range are reported (the oracle cannot know of
// a meter that sent nothing), and series without a declared per-day grid
// (no resolution, P1M, P1Y) are skipped. Ordered by malo_id, obis_code,
// melo_id, identity, resolution.
func (v View) Completeness(from, to metering.Date) []CompletenessRow {
	acc := map[string]*seriesAcc{}
	v.fold(time.Time{}, time.Time{}, false, func(r meterstore.Row) {
		if r.Resolution == nil {
			return
		}
		sp, err := metering.ParseSparte(r.Sparte)
		if err != nil {
			return
		}
		res, err := metering.ParseResolution(*r.Resolution)
		if err != nil {
			return
		}
		d := metering.BalancingDay(r.From, sp)
		if d.Compare(from) < 0 || d.Compare(to) >= 0 {
			return
		}
		parts := []string{r.MaloID, r.ObisCode, r.Sparte, *r.Resolution}
		var melo *string
		if v.o.melo && r.MeloID != nil {
			m := *r.MeloID
			melo = &m
			parts = append(parts, m)
		}
		var ident []string
		for _, i := range v.o.identity {
			if i < len(r.Extra) && r.Extra[i] != nil {
				ident = append(ident, *r.Extra[i])
			} else {
				ident = append(ident, "")
			}
		}
		parts = append(parts, ident...)
		k := strings.Join(parts, "\x00")
		a := acc[k]
		if a == nil {
			a = &seriesAcc{row: CompletenessRow{MaloID: r.MaloID, ObisCode: r.ObisCode, MeloID: melo, Identity: ident,
				Sparte: r.Sparte, Resolution: *r.Resolution}, sparte: sp, res: res, perDay: map[metering.Date]int{}}
			acc[k] = a
		}
		a.perDay[d]++
		a.row.Actual++
		q, err := metering.ParseQuality(r.Quality)
		if q == metering.QualitySubstituted {
			a.row.Substituted++
		}
		if err != nil || !q.IsBillable() {
			a.row.NotBillable++
		}
	})
	var out []CompletenessRow
	for _, a := range acc {
		ok := true
		for d := from; d.Compare(to) < 0; d = d.AddDays(1) {
			exp, err := metering.ExpectedIntervals(d, a.res, a.sparte)
			if err != nil {
				ok = false
				break
			}
			got := a.perDay[d]
			a.row.Expected += exp
			switch {
			case got < exp:
				a.row.Missing += exp - got
				if a.row.FirstGap.IsZero() {
					a.row.FirstGap = d
				}
			case got > exp:
				a.row.Surplus += got - exp
			}
		}
		if !ok {
			continue
		}
		a.row.Complete = a.row.Missing == 0 && a.row.Surplus == 0
		out = append(out, a.row)
	}
	slices.SortFunc(out, func(a, b CompletenessRow) int {
		m := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		return cmp.Or(strings.Compare(a.MaloID, b.MaloID), strings.Compare(a.ObisCode, b.ObisCode),
			strings.Compare(m(a.MeloID), m(b.MeloID)), slices.Compare(a.Identity, b.Identity),
			strings.Compare(a.Resolution, b.Resolution))
	})
	return out
}
