package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
)

// delivery is one write a soak writer makes: a workload delivery through
// Append or a HotWriter, or an operator-authored value through
// AppendAuthoritative.
type delivery struct {
	testkit.Delivery
	authored bool
}

// authoredEvery: about one original in so many gets an authored replacement.
const authoredEvery = 20

// withAuthored interleaves, in arrival order, an operator-authored replacement
// (values ×0.97) for about one original in authoredEvery whose reading gets no
// correction, 90 minutes after the original arrives. It states the version
// below the original's as its floor, so AppendAuthoritative stores the floor
// (outranked) and re-appends the value at the version after the one in force:
// the original's next, which no correction holds (authoredRows).
func withAuthored(ds []testkit.Delivery, seed uint64) ([]delivery, error) {
	corrected := map[string]bool{}
	for _, d := range ds {
		if d.Kind == testkit.Correction {
			corrected[readingKey(d.Series)] = true
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0xA07))
	out := make([]delivery, 0, len(ds)+len(ds)/authoredEvery)
	for _, d := range ds {
		out = append(out, delivery{Delivery: d})
		if d.Kind != testkit.Original || corrected[readingKey(d.Series)] || rng.IntN(authoredEvery) != 0 {
			continue
		}
		a, err := authoredFor(d)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(a, b delivery) int { return a.Arrival.Compare(b.Arrival) })
	return out, nil
}

// readingKey names a delivery's readings: MaLo, channel, tenant and first interval.
func readingKey(s meterstore.StoredSeries) string {
	return fmt.Sprint(s.MaloID, s.Obis, s.Extra["tenant"], s.Intervals[0].From.UnixMicro())
}

func authoredFor(d testkit.Delivery) (delivery, error) {
	s := d.Series
	floor, err := metering.NewVersion(s.Version.Uint64() - 1)
	if err != nil {
		return delivery{}, err
	}
	s.Version = floor
	s.RecordedAt = d.Arrival.Add(90 * time.Minute)
	s.Intervals = slices.Clone(s.Intervals)
	for i := range s.Intervals {
		s.Intervals[i].Value = s.Intervals[i].Value.Mul(decimal.RequireFromString("0.97")).Round(6)
	}
	return delivery{Delivery: testkit.Delivery{Series: s, Kind: testkit.Original, Arrival: s.RecordedAt}, authored: true}, nil
}

// authoredRows is what AppendAuthoritative stores for an authored delivery
// over its original: the floor rows, outranked by the original, and the
// values that differ from the original's at its next version, which makes
// them current. A zero stays zero ×0.97: that value is already in force, and
// nothing is re-appended for it.
func authoredRows(cfg meterstore.TableConfig, d delivery) ([]meterstore.Row, error) {
	floor, err := cfg.Encode(d.Series)
	if err != nil {
		return nil, err
	}
	rows := slices.Clone(floor)
	for _, r := range floor {
		if !r.Value.IsZero() {
			r.Version += 2
			rows = append(rows, r)
		}
	}
	return rows, nil
}
