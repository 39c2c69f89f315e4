package testkit

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

// Oracle is an independent model of a table's resolution: a map from merge
// key to every version recorded for it. Resolution happens at query time —
// per (merge key, version_scope) the highest admitted version wins — by a
// plain fold, never by SQL, so it cannot share a mistake with resolution.sql.
//
// Record mirrors the store's write rules: a row identical in assertion to one
// already held at the same (merge key, version) is a duplicate (the first one
// recorded is kept, recorded_at included); a different assertion there is
// refused and nothing of that call is recorded. An Oracle is not safe for
// concurrent use.
type Oracle struct {
	cfg      meterstore.TableConfig
	melo     bool
	identity []int // positions in Row.Extra of the identity columns
	readings map[string]*reading
}

// reading holds every version of one merge key, in recording order (a
// handful at most, so a slice beats a map).
type reading struct {
	versions []meterstore.Row
}

func (e *reading) version(v uint64) (meterstore.Row, bool) {
	for _, r := range e.versions {
		if r.Version == v {
			return r, true
		}
	}
	return meterstore.Row{}, false
}

// NewOracle returns an empty oracle for the table cfg describes: its merge
// key (malo_id, obis_code, from [, melo_id] [, identity columns]) decides
// what one reading is.
func NewOracle(cfg meterstore.TableConfig) *Oracle {
	o := &Oracle{cfg: cfg, melo: cfg.IdentifyByMelo(), readings: map[string]*reading{}}
	for i, c := range cfg.ExtraColumns() {
		if c.Kind == meterstore.Identity {
			o.identity = append(o.identity, i)
		}
	}
	return o
}

// Config returns the table configuration the oracle resolves by.
func (o *Oracle) Config() meterstore.TableConfig { return o.cfg }

// Recorded counts what a Record call did.
type Recorded struct {
	New       int // rows not held before
	Duplicate int // identical redeliveries, skipped
}

func (o *Oracle) key(r meterstore.Row) (string, error) {
	var b strings.Builder
	b.WriteString(r.MaloID)
	b.WriteByte(0)
	b.WriteString(r.ObisCode)
	b.WriteByte(0)
	b.WriteString(strconv.FormatInt(r.From.UnixMicro(), 10))
	if o.melo {
		if r.MeloID == nil {
			return "", fmt.Errorf("testkit: oracle: table %s identifies by melo_id, row %s %s %s has none",
				o.cfg.Name(), r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339))
		}
		b.WriteByte(0)
		b.WriteString(*r.MeloID)
	}
	for _, i := range o.identity {
		if i >= len(r.Extra) || r.Extra[i] == nil {
			return "", fmt.Errorf("testkit: oracle: row %s %s has no value for identity column %s",
				r.MaloID, r.ObisCode, o.cfg.ExtraColumns()[i].Name)
		}
		b.WriteByte(0)
		b.WriteString(*r.Extra[i])
	}
	return b.String(), nil
}

func cloneRow(r meterstore.Row) meterstore.Row {
	c := r
	c.Extra = slices.Clone(r.Extra)
	return c
}

// Record adds rows. It is atomic: when one row conflicts (a different
// assertion under a version already held, here or earlier in rows), the
// error names it and nothing is recorded.
func (o *Oracle) Record(rows ...meterstore.Row) (Recorded, error) {
	type pend struct {
		key string
		row meterstore.Row
	}
	var res Recorded
	batch := map[string]map[uint64]meterstore.Row{}
	var add []pend
	for _, r := range rows {
		if r.Version == 0 || r.VersionScope == "" {
			return Recorded{}, fmt.Errorf("testkit: oracle: row %s %s has no version or scope", r.MaloID, r.ObisCode)
		}
		k, err := o.key(r)
		if err != nil {
			return Recorded{}, err
		}
		prev, ok := batch[k][r.Version]
		if !ok {
			if e := o.readings[k]; e != nil {
				prev, ok = e.version(r.Version)
			}
		}
		if ok {
			if !meterstore.SameAssertion(prev, r) {
				return Recorded{}, fmt.Errorf("testkit: oracle: %s %s at %s version %d is already recorded with value %s (%s, scope %s); %s (%s, scope %s) is a conflicting restatement",
					r.MaloID, r.ObisCode, r.From.UTC().Format(time.RFC3339), r.Version, prev.Value, prev.Quality, prev.VersionScope, r.Value, r.Quality, r.VersionScope)
			}
			res.Duplicate++
			continue
		}
		if batch[k] == nil {
			batch[k] = map[uint64]meterstore.Row{}
		}
		batch[k][r.Version] = r
		add = append(add, pend{k, cloneRow(r)})
	}
	for _, p := range add {
		e := o.readings[p.key]
		if e == nil {
			e = &reading{}
			o.readings[p.key] = e
		}
		e.versions = append(e.versions, p.row)
		res.New++
	}
	return res, nil
}

// RecordSeries encodes each series with the oracle's table configuration
// (cfg.Encode, the write path's encoder) and records the rows. It stops at
// the first error; earlier series stay recorded.
func (o *Oracle) RecordSeries(series ...meterstore.StoredSeries) (Recorded, error) {
	var total Recorded
	for _, s := range series {
		rows, err := o.cfg.Encode(s)
		if err != nil {
			return total, err
		}
		r, err := o.Record(rows...)
		if err != nil {
			return total, err
		}
		total.New += r.New
		total.Duplicate += r.Duplicate
	}
	return total, nil
}

// RecordDeliveries records generated deliveries in order (see RecordSeries).
func (o *Oracle) RecordDeliveries(ds ...Delivery) (Recorded, error) {
	var total Recorded
	for _, d := range ds {
		r, err := o.RecordSeries(d.Series)
		total.New += r.New
		total.Duplicate += r.Duplicate
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Ceiling bounds what enters resolution, like the store's AsOf version
// ceiling and AsKnownAt. Zero fields mean no bound.
type Ceiling struct {
	// MaxVersion admits versions ≤ MaxVersion only; 0 = all.
	MaxVersion uint64
	// KnownAt admits rows recorded at or before it only (recorded_at ≤
	// KnownAt); zero = all. This reconstructs the set of readings, not only
	// their values: a reading first recorded later is absent.
	KnownAt time.Time
}

// View is the oracle's answer under a Ceiling. It reads the oracle's current
// state each time it is queried.
type View struct {
	o *Oracle
	c Ceiling
}

// With returns a view under c.
func (o *Oracle) With(c Ceiling) View { return View{o: o, c: c} }

// Current is the view without ceilings: what the resolved relation holds now.
func (o *Oracle) Current() View { return View{o: o} }

func (v View) admits(r meterstore.Row) bool {
	return (v.c.MaxVersion == 0 || r.Version <= v.c.MaxVersion) &&
		(v.c.KnownAt.IsZero() || !r.RecordedAt.After(v.c.KnownAt))
}

// inRange is from ≤ t < to; a zero bound is open.
func inRange(t, from, to time.Time) bool {
	return (from.IsZero() || !t.Before(from)) && (to.IsZero() || t.Before(to))
}

// fold visits the winners (all = false) or every admitted version (all =
// true) of the readings whose from lies in [from, to). Winners are picked
// per version_scope: the highest admitted version in each scope.
func (v View) fold(from, to time.Time, all bool, visit func(meterstore.Row)) {
	var best []int
	for _, e := range v.o.readings {
		if !inRange(e.versions[0].From, from, to) {
			continue // every version of a reading shares its from
		}
		best = best[:0]
		for i, r := range e.versions {
			if !v.admits(r) {
				continue
			}
			if all {
				visit(r)
				continue
			}
			found := false
			for j, b := range best {
				if e.versions[b].VersionScope == r.VersionScope {
					found = true
					if r.Version > e.versions[b].Version {
						best[j] = i
					}
					break
				}
			}
			if !found {
				best = append(best, i)
			}
		}
		for _, i := range best {
			visit(e.versions[i])
		}
	}
}

func sortRows(rows []meterstore.Row) {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	slices.SortFunc(rows, func(a, b meterstore.Row) int {
		c := cmp.Or(strings.Compare(a.MaloID, b.MaloID), strings.Compare(a.ObisCode, b.ObisCode),
			a.From.Compare(b.From), strings.Compare(str(a.MeloID), str(b.MeloID)))
		if c != 0 {
			return c
		}
		for i := range min(len(a.Extra), len(b.Extra)) {
			if c := strings.Compare(str(a.Extra[i]), str(b.Extra[i])); c != 0 {
				return c
			}
		}
		return cmp.Or(strings.Compare(a.VersionScope, b.VersionScope), cmp.Compare(a.Version, b.Version))
	})
}

// Winners returns the resolved rows with from in [from, to) (zero bounds are
// open), ordered by malo_id, obis_code, from, melo_id, extra columns, scope.
func (v View) Winners(from, to time.Time) []meterstore.Row {
	var out []meterstore.Row
	v.fold(from, to, false, func(r meterstore.Row) { out = append(out, cloneRow(r)) })
	sortRows(out)
	return out
}

// Versions returns every admitted version with from in [from, to): what
// the unresolved (_versions) relation holds, in Winners order then version.
func (v View) Versions(from, to time.Time) []meterstore.Row {
	var out []meterstore.Row
	v.fold(from, to, true, func(r meterstore.Row) { out = append(out, cloneRow(r)) })
	sortRows(out)
	return out
}

// RowCount is the number of resolved rows with from in [from, to).
func (v View) RowCount(from, to time.Time) int {
	n := 0
	v.fold(from, to, false, func(meterstore.Row) { n++ })
	return n
}

// RawRowCount is the number of stored versions with from in [from, to):
// what readings_versions holds.
func (v View) RawRowCount(from, to time.Time) int {
	n := 0
	v.fold(from, to, true, func(meterstore.Row) { n++ })
	return n
}

// Sum is the resolved sum of value over from in [from, to). It adds values
// of every unit; filter with SumBy for a mixed table.
func (v View) Sum(from, to time.Time) decimal.Decimal {
	var s decimal.Decimal
	v.fold(from, to, false, func(r meterstore.Row) { s = s.Add(r.Value) })
	return s
}

// NaiveSum sums every version — what SUM(value) over readings_versions, or
// an engine without resolution, computes. It exceeds Sum exactly when a
// superseded version with a non-zero value is in range.
func (v View) NaiveSum(from, to time.Time) decimal.Decimal {
	var s decimal.Decimal
	v.fold(from, to, true, func(r meterstore.Row) { s = s.Add(r.Value) })
	return s
}

// SumBy sums resolved values with from in [from, to) per group key(row).
func (v View) SumBy(from, to time.Time, key func(meterstore.Row) string) map[string]decimal.Decimal {
	out := map[string]decimal.Decimal{}
	v.fold(from, to, false, func(r meterstore.Row) {
		k := key(r)
		out[k] = out[k].Add(r.Value)
	})
	return out
}

// MaloChannelDay groups a sum: one MaLo, one OBIS channel, one balancing day.
type MaloChannelDay struct {
	MaloID       string
	ObisCode     string
	BalancingDay metering.Date
}

// balancingDay is computed from from and sparte with metering's calendar —
// not read from the row's stored balancing_day, so the oracle also checks
// the encoder's column.
func balancingDay(r meterstore.Row) metering.Date {
	sp, err := metering.ParseSparte(r.Sparte)
	if err != nil {
		return metering.DateOf(r.BalancingDay)
	}
	return metering.BalancingDay(r.From, sp)
}

// SumsByMaloChannelDay is the resolved sum per (malo_id, obis_code,
// balancing day of the row's Sparte) over from in [from, to). Identity
// columns and MeLos are summed together.
func (v View) SumsByMaloChannelDay(from, to time.Time) map[MaloChannelDay]decimal.Decimal {
	out := map[MaloChannelDay]decimal.Decimal{}
	v.fold(from, to, false, func(r meterstore.Row) {
		k := MaloChannelDay{r.MaloID, r.ObisCode, balancingDay(r)}
		out[k] = out[k].Add(r.Value)
	})
	return out
}

// KnownAt returns the resolved readings as known at t: only rows recorded
// at or before t enter resolution, so a later correction and a later first
// delivery are both invisible. It is With(Ceiling{KnownAt: t}).Winners over
// all time; combine a version ceiling with With.
func (o *Oracle) KnownAt(t time.Time) []meterstore.Row {
	return o.With(Ceiling{KnownAt: t}).Winners(time.Time{}, time.Time{})
}

// Shorthands for the current view.

// Winners is Current().Winners.
func (o *Oracle) Winners(from, to time.Time) []meterstore.Row { return o.Current().Winners(from, to) }

// RowCount is Current().RowCount.
func (o *Oracle) RowCount(from, to time.Time) int { return o.Current().RowCount(from, to) }

// RawRowCount is Current().RawRowCount.
func (o *Oracle) RawRowCount(from, to time.Time) int { return o.Current().RawRowCount(from, to) }

// Sum is Current().Sum.
func (o *Oracle) Sum(from, to time.Time) decimal.Decimal { return o.Current().Sum(from, to) }

// NaiveSum is Current().NaiveSum.
func (o *Oracle) NaiveSum(from, to time.Time) decimal.Decimal { return o.Current().NaiveSum(from, to) }

// SumBy is Current().SumBy.
func (o *Oracle) SumBy(from, to time.Time, key func(meterstore.Row) string) map[string]decimal.Decimal {
	return o.Current().SumBy(from, to, key)
}

// SumsByMaloChannelDay is Current().SumsByMaloChannelDay.
func (o *Oracle) SumsByMaloChannelDay(from, to time.Time) map[MaloChannelDay]decimal.Decimal {
	return o.Current().SumsByMaloChannelDay(from, to)
}

// Completeness is Current().Completeness.
func (o *Oracle) Completeness(from, to metering.Date) []CompletenessRow {
	return o.Current().Completeness(from, to)
}
