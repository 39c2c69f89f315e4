package plan

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestElisionNeverHidesARepeatedKey: over generated layouts of cold files —
// daily windows split by malo_id range, corrections in the window (some
// files holding several versions), months compacted into keys-unique and
// superseded files, late corrections above or within a compacted month's
// versions, marks present or absent, statistics missing — the planner's
// decision, carried out row by row in Go, answers exactly what a brute-force
// fold of the layout's rows answers (the highest version per resolution
// key), for current reads, under version and recorded_at ceilings, and
// over a range of "from". A clean run, a skipped file or an exclusion split
// that let a key repeat or a superseded row win would differ here.
func TestElisionNeverHidesARepeatedKey(t *testing.T) {
	const layouts = 2000
	var seen planFeatures
	for seed := range uint64(layouts) {
		rng := rand.New(rand.NewPCG(seed, 0xE11DE))
		l := generateLayout(rng)
		for _, q := range l.reads(rng) {
			files := l.planned(q)
			r := readFor(files, true, q.ceiling())
			got := l.carryOut(r, q)
			want := l.fold(q)
			require.Equal(t, want, got, "seed %d, read %+v\n%s\ndecision: clean %v, base %v, upper %v (clean %v), merge %v with %v, ranked %v, skipped %v",
				seed, q, l, paths(r.clean), paths(r.base), paths(r.upper), r.upperClean, paths(r.mergeBase), paths(r.mergeOther), paths(r.ranked), paths(r.skipped))
			raw := l.carryOut(readFor(files, false, q.ceiling()), q)
			require.Equal(t, l.visible(q), raw, "seed %d: readings_versions", seed)
			seen.count(r)
		}
	}
	t.Logf("decisions seen: %+v", seen)
	// The generator reaches every kind of decision, or the test proves little.
	for name, n := range map[string]int{"clean": seen.clean, "clean by mark": seen.byMark, "exclusion": seen.exclusion,
		"merge": seen.merge, "ranked": seen.ranked, "skipped": seen.skipped} {
		require.Greater(t, n, layouts/20, name)
	}
}

// planFeatures counts the reads whose decision had each part.
type planFeatures struct{ clean, byMark, exclusion, merge, ranked, skipped int }

func (s *planFeatures) count(r coldRead) {
	for _, c := range []struct {
		n   *int
		hit bool
	}{{&s.clean, len(r.clean) > 0}, {&s.byMark, r.byMark > 0}, {&s.exclusion, len(r.base) > 0}, {&s.merge, len(r.mergeBase) > 0},
		{&s.ranked, len(r.ranked) > 0}, {&s.skipped, len(r.skipped) > 0}} {
		if c.hit {
			*c.n++
		}
	}
}

// layoutRow is one stored reading of a generated layout: its resolution key
// (malo_id, a "from" slot, a version scope), its version and when it was
// recorded.
type layoutRow struct {
	malo     int
	slot     int
	scope    int
	version  uint64
	recorded int
}

func (r layoutRow) key() [3]int { return [3]int{r.malo, r.slot, r.scope} }

// layoutFileRows is a generated file: its rows and the statistics and marks
// the planner sees.
type layoutFileRows struct {
	file ColdFile
	rows []layoutRow
}

type layout struct {
	files []layoutFileRows
	next  int // file names
}

const (
	layoutSlotsPerDay = 4
	layoutSlot        = 6 * time.Hour
)

var layoutDay0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func layoutMalo(m int) string { return fmt.Sprintf("1000000%04d", m) }

func slotTime(s int) time.Time { return layoutDay0.Add(time.Duration(s) * layoutSlot) }

// generateLayout archives days of readings (some days as one file of
// every version, as a foreign writer might), corrects some in the window,
// compacts some months and corrects them late.
func generateLayout(rng *rand.Rand) *layout {
	l := &layout{}
	days, malos, scopes := 3+rng.IntN(8), 2+rng.IntN(5), 1+rng.IntN(2)
	taken := map[[3]int]map[uint64]bool{} // (key, version) is unique, as the store keeps it
	add := func(rows *[]layoutRow, malo, slot, scope int, v uint64) {
		k := [3]int{malo, slot, scope}
		if taken[k] == nil {
			taken[k] = map[uint64]bool{}
		}
		if taken[k][v] {
			return
		}
		taken[k][v] = true
		*rows = append(*rows, layoutRow{malo: malo, slot: slot, scope: scope, version: v, recorded: rng.IntN(100)})
	}
	dayVersion := func(d, n int) uint64 { return uint64(1000 + d*10 + n) }
	for d := range days {
		var rows []layoutRow
		for m := range malos {
			for s := d * layoutSlotsPerDay; s < (d+1)*layoutSlotsPerDay; s++ {
				for sc := range scopes {
					add(&rows, m, s, sc, dayVersion(d, 1))
				}
			}
		}
		var fix []layoutRow
		if rng.IntN(2) == 0 { // corrections in the window: one version, or two in one file
			top := 2 + rng.IntN(2)
			for _, r := range rows {
				if rng.IntN(4) == 0 {
					add(&fix, r.malo, r.slot, r.scope, dayVersion(d, 2+rng.IntN(top-1)))
				}
			}
		}
		if rng.IntN(6) == 0 { // a foreign writer's file: the day's versions in one, unmarked
			l.add(append(rows, fix...), false, false)
			continue
		}
		l.addSplitByMalo(rng, rows, 1+rng.IntN(2), rng.IntN(3) == 0)
		l.add(fix, false, false)
	}
	if rng.IntN(3) > 0 { // compact a "month" of days
		a := rng.IntN(days)
		b := a + rng.IntN(days-a)
		l.compact(rng, a, b)
	}
	for range rng.IntN(4) { // late corrections: creation-time versions, or within the days'
		var fix []layoutRow
		m, d := rng.IntN(malos), rng.IntN(days)
		v := uint64(5000 + rng.IntN(100))
		if rng.IntN(3) == 0 {
			v = dayVersion(d, 5+rng.IntN(4))
		}
		for s := d * layoutSlotsPerDay; s < (d+1)*layoutSlotsPerDay; s++ {
			for sc := range scopes {
				for mm := m; mm <= min(m+rng.IntN(2), malos-1); mm++ {
					if rng.IntN(2) == 0 {
						add(&fix, mm, s, sc, v)
					}
				}
			}
		}
		l.add(fix, false, false)
	}
	l.degrade(rng)
	return l
}

// addSplitByMalo adds rows as n files split by malo_id range, marked
// keys-unique when asked (and true).
func (l *layout) addSplitByMalo(rng *rand.Rand, rows []layoutRow, n int, mark bool) {
	slices.SortFunc(rows, func(a, b layoutRow) int { return cmp.Compare(a.malo, b.malo) })
	for len(rows) > 0 {
		cut := len(rows)
		if n > 1 {
			cut = len(rows) / n
			for cut < len(rows) && cut > 0 && rows[cut].malo == rows[cut-1].malo {
				cut++
			}
			cut = max(cut, 1)
			n--
		}
		l.add(rows[:cut], mark && rng.IntN(5) > 0, false)
		rows = rows[cut:]
	}
}

// compact replaces the files lying within days a..b by the current rows
// (split by malo_id, marked keys-unique or not) and the rows they supersede
// (marked superseded or not), as catalog's compaction writes them.
func (l *layout) compact(rng *rand.Rand, a, b int) {
	lo, hi := a*layoutSlotsPerDay, (b+1)*layoutSlotsPerDay-1
	var rows []layoutRow
	var keep []layoutFileRows
	for _, f := range l.files {
		inside := true
		for _, r := range f.rows {
			inside = inside && r.slot >= lo && r.slot <= hi
		}
		if inside {
			rows = append(rows, f.rows...)
		} else {
			keep = append(keep, f)
		}
	}
	l.files = keep
	newest := map[[3]int]layoutRow{}
	for _, r := range rows {
		if n, ok := newest[r.key()]; !ok || r.version > n.version {
			newest[r.key()] = r
		}
	}
	var current, older []layoutRow
	for _, r := range rows {
		if newest[r.key()] == r {
			current = append(current, r)
		} else {
			older = append(older, r)
		}
	}
	l.addSplitByMalo(rng, current, 1+rng.IntN(3), true)
	l.add(older, false, rng.IntN(5) > 0)
}

// add adds a file of rows with exact statistics and the marks asked for;
// the marks must be true of the rows (the compactor writes them so).
func (l *layout) add(rows []layoutRow, keysUnique, superseded bool) {
	if len(rows) == 0 {
		return
	}
	l.next++
	f := ColdFile{Path: fmt.Sprintf("f%d", l.next), Records: int64(len(rows)), KeysUnique: keysUnique, Superseded: superseded}
	lo, hi := slotTime(rows[0].slot), slotTime(rows[0].slot)
	vlo, vhi := rows[0].version, rows[0].version
	mlo, mhi := layoutMalo(rows[0].malo), layoutMalo(rows[0].malo)
	for _, r := range rows {
		lo, hi = minTime(lo, slotTime(r.slot)), maxTime(hi, slotTime(r.slot))
		vlo, vhi = min(vlo, r.version), max(vhi, r.version)
		mlo, mhi = min(mlo, layoutMalo(r.malo)), max(mhi, layoutMalo(r.malo))
	}
	f.FromMin, f.FromMax, f.VersionMin, f.VersionMax, f.MaloMin, f.MaloMax = &lo, &hi, &vlo, &vhi, &mlo, &mhi
	l.files = append(l.files, layoutFileRows{file: f, rows: slices.Clone(rows)})
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// degrade drops statistics at random: a missing bound proves nothing.
func (l *layout) degrade(rng *rand.Rand) {
	for i := range l.files {
		f := &l.files[i].file
		switch rng.IntN(12) {
		case 0:
			f.MaloMin, f.MaloMax = nil, nil
		case 1:
			f.VersionMax = nil
		case 2:
			f.FromMin = nil
		}
	}
}

// layoutRead is one read of a layout: a "from" range in slots (-1: open)
// and a ceiling (a version, or a recorded instant; 0: none).
type layoutRead struct {
	lo, hi     int
	maxVersion uint64
	knownAt    int
}

func (q layoutRead) ceiling() bool { return q.maxVersion > 0 || q.knownAt > 0 }

func (q layoutRead) admits(r layoutRow) bool {
	return (q.lo < 0 || r.slot >= q.lo) && (q.hi < 0 || r.slot < q.hi) &&
		(q.maxVersion == 0 || r.version <= q.maxVersion) && (q.knownAt == 0 || r.recorded <= q.knownAt)
}

// reads are a current read of everything and three random ones.
func (l *layout) reads(rng *rand.Rand) []layoutRead {
	out := []layoutRead{{lo: -1, hi: -1}}
	var versions []uint64
	for _, f := range l.files {
		for _, r := range f.rows {
			versions = append(versions, r.version)
		}
	}
	for range 3 {
		q := layoutRead{lo: -1, hi: -1}
		if rng.IntN(2) == 0 {
			q.lo = rng.IntN(12)
			q.hi = q.lo + 1 + rng.IntN(12)
		}
		switch rng.IntN(3) {
		case 0:
			q.maxVersion = versions[rng.IntN(len(versions))]
		case 1:
			q.knownAt = rng.IntN(100)
		}
		out = append(out, q)
	}
	return out
}

// planned are the files a read's range keeps, pruned by "from" bounds as the
// catalog prunes them (a file missing them is kept).
func (l *layout) planned(q layoutRead) []ColdFile {
	var out []ColdFile
	for _, f := range l.files {
		c := f.file
		if c.FromMin != nil && c.FromMax != nil &&
			(q.hi >= 0 && !c.FromMin.Before(slotTime(q.hi)) || q.lo >= 0 && c.FromMax.Before(slotTime(q.lo))) {
			continue
		}
		out = append(out, c)
	}
	return out
}

func (l *layout) rowsOf(files []ColdFile, q layoutRead) []layoutRow {
	byPath := map[string][]layoutRow{}
	for _, f := range l.files {
		byPath[f.file.Path] = f.rows
	}
	var out []layoutRow
	for _, f := range files {
		for _, r := range byPath[f.Path] {
			if q.admits(r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// carryOut is what the rendered SQL computes for a decision, row by row:
// clean files as they are; exclusion — a base row unless the files of higher
// versions hold its key, and those files' rows as they are (upperClean) or
// their newest per key; merge — a base row unless the other files hold its
// key, and the newest per key of the rest; the ranked runs' newest row per
// key; skipped files not at all.
func (l *layout) carryOut(r coldRead, q layoutRead) []layoutRow {
	out := l.rowsOf(r.clean, q)
	upper := l.rowsOf(r.upper, q)
	newer := map[[3]int]bool{}
	for _, u := range upper {
		newer[u.key()] = true
	}
	for _, x := range l.rowsOf(r.base, q) {
		if !newer[x.key()] {
			out = append(out, x)
		}
	}
	if !r.upperClean {
		upper = newestPerKey(upper)
	}
	out = append(out, upper...)
	other := l.rowsOf(r.mergeOther, q)
	contested := map[[3]int]bool{}
	for _, o := range other {
		contested[o.key()] = true
	}
	for _, x := range l.rowsOf(r.mergeBase, q) {
		if contested[x.key()] {
			other = append(other, x)
		} else {
			out = append(out, x)
		}
	}
	out = append(out, newestPerKey(other)...)
	out = append(out, newestPerKey(l.rowsOf(r.ranked, q))...)
	return sortedRows(out)
}

// visible is every row the read admits, of every file.
func (l *layout) visible(q layoutRead) []layoutRow {
	var all []ColdFile
	for _, f := range l.files {
		all = append(all, f.file)
	}
	return sortedRows(l.rowsOf(all, q))
}

// fold is resolution by brute force: the newest admitted row per key.
func (l *layout) fold(q layoutRead) []layoutRow { return sortedRows(newestPerKey(l.visible(q))) }

func newestPerKey(rows []layoutRow) []layoutRow {
	newest := map[[3]int]layoutRow{}
	for _, r := range rows {
		if n, ok := newest[r.key()]; !ok || r.version > n.version {
			newest[r.key()] = r
		}
	}
	out := make([]layoutRow, 0, len(newest))
	for _, r := range newest {
		out = append(out, r)
	}
	return out
}

func sortedRows(rows []layoutRow) []layoutRow {
	slices.SortFunc(rows, func(a, b layoutRow) int {
		return cmp.Or(cmp.Compare(a.malo, b.malo), cmp.Compare(a.slot, b.slot), cmp.Compare(a.scope, b.scope), cmp.Compare(a.version, b.version))
	})
	if rows == nil {
		return []layoutRow{}
	}
	return rows
}

func (l *layout) String() string {
	s := ""
	for _, f := range l.files {
		c := f.file
		s += fmt.Sprintf("  %s: %d rows, from %s..%s, version %s..%s, malo %s..%s, keys-unique %v, superseded %v\n", c.Path, len(f.rows),
			optional(c.FromMin), optional(c.FromMax), optional(c.VersionMin), optional(c.VersionMax), optional(c.MaloMin), optional(c.MaloMax), c.KeysUnique, c.Superseded)
	}
	return s
}

func optional[T any](p *T) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}
