package plan

import (
	"cmp"
	"context"
	"slices"
)

// coldRead is how a cold half's files are read: the runs proven free of
// repeated keys as they are, each other run resolved on its own — by
// exclusion or by merge where statistics and marks allow, ranked otherwise —
// and the files a current read does not need left out.
type coldRead struct {
	clean []ColdFile // read as they are (for readings_versions: every file)
	// The runs resolved by exclusion: base, files whose keys cannot repeat,
	// and upper, files whose every version lies above base's; upperClean
	// when upper's keys cannot repeat either.
	base, upper []ColdFile
	upperClean  bool
	// The runs resolved by merge: mergeBase, files whose keys cannot repeat,
	// and mergeOther, fewer rows of any versions.
	mergeBase, mergeOther []ColdFile
	ranked                []ColdFile // the runs resolved by resolution.sql's ROW_NUMBER()
	skipped               []ColdFile // superseded files a read without ceilings leaves out
	byMark                int        // files whose run was proven by a keys-unique mark
}

// parts are the file sets the read renders a relation of, each non-empty.
func (r coldRead) parts() [][]ColdFile {
	var out [][]ColdFile
	for _, p := range [][]ColdFile{r.clean, r.base, r.upper, r.mergeBase, r.mergeOther, r.ranked} {
		if len(p) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// resolved are the files read through resolution.
func (r coldRead) resolved() int {
	return len(r.base) + len(r.upper) + len(r.mergeBase) + len(r.mergeOther) + len(r.ranked)
}

// usesMarks reports whether the read depends on footer marks, which only a
// per-file read can honour (iceberg_scan selects rows by statistics).
func (r coldRead) usesMarks() bool { return r.byMark > 0 || len(r.skipped) > 0 }

// elideOrResolve decides, for each cold half, from the planned files'
// statistics and marks alone, which runs need resolution and how, and
// moves a half iceberg_scan cannot read that way to a per-file read.
func elideOrResolve(_ context.Context, pl *planning) error {
	v := pl.in.View
	ceiling := v.MaxVersion != nil || v.KnownAt != nil
	for _, ref := range pl.refs {
		c := ref.cold
		if c == nil {
			continue
		}
		c.read = readFor(c.plan.Files, ref.rel.resolved, ceiling)
		pl.out.Provenance.ColdFiles -= len(c.read.skipped)
		pl.out.Provenance.ResolvedFiles += c.read.resolved()
		if why := c.perFileReason(ref.rel.table.Config); why != "" {
			c.path, c.pathNote = readParquetPath{}, why
		}
	}
	return nil
}

// readFor decides how files are read for a resolved relation or a raw one;
// ceiling says a version or recorded_at ceiling filters the rows, under
// which a superseded row can be the answer.
func readFor(files []ColdFile, resolved, ceiling bool) coldRead {
	if !resolved {
		return coldRead{clean: files}
	}
	r := coldRead{upperClean: true}
	var read []ColdFile
	for _, f := range files {
		if f.Superseded && !ceiling {
			r.skipped = append(r.skipped, f)
		} else {
			read = append(read, f)
		}
	}
	for _, run := range runs(read) {
		if ok, byMark := run.clean(); ok {
			r.clean = append(r.clean, run...)
			r.byMark += byMark
			continue
		}
		if base, upper, byMark, ok := run.exclusionSplit(); ok {
			r.base = append(r.base, base...)
			r.upper = append(r.upper, upper...)
			r.byMark += byMark
			clean, _ := cleanSet(upper)
			r.upperClean = r.upperClean && clean
			continue
		}
		if base, other, byMark, ok := run.mergeSplit(); ok {
			r.mergeBase = append(r.mergeBase, base...)
			r.mergeOther = append(r.mergeOther, other...)
			r.byMark += byMark
			continue
		}
		r.ranked = append(r.ranked, run...)
	}
	return r
}

// A run is a maximal group of files whose boxes — "from" bounds by malo_id
// bounds — overlap, transitively. The merge key holds both columns, so two
// runs never share a resolution key: each run is resolved (or not) on its
// own. A missing or truncated malo_id bound spans that axis, and a file
// missing a "from" or version bound puts every file in one run: a missing
// statistic proves nothing (invariant 8).
// Partition values are never used (a table repartitioned out of band could
// carry a field on an attribute column).
type run []ColdFile

// runs groups files into runs, ordered by their first file's "from".
func runs(files []ColdFile) []run { return groupRuns(files, true) }

// groupRuns groups files whose "from" bounds overlap — and, byMalo, whose
// malo_id bounds overlap too — transitively, by a sweep over "from".
func groupRuns(files []ColdFile, byMalo bool) []run {
	for _, f := range files {
		if !f.known() {
			return []run{files}
		}
	}
	sorted := slices.Clone(files)
	slices.SortStableFunc(sorted, func(a, b ColdFile) int { return a.FromMin.Compare(*b.FromMin) })
	parent := make([]int, len(sorted))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	var active []int // files whose "from" interval may still reach the next one
	for i, f := range sorted {
		active = slices.DeleteFunc(active, func(j int) bool { return sorted[j].FromMax.Before(*f.FromMin) })
		for _, j := range active {
			if !byMalo || malosOverlap(sorted[j], f) {
				parent[find(i)] = find(j)
			}
		}
		active = append(active, i)
	}
	var out []run
	at := map[int]int{} // root → its run's index in out
	for i, f := range sorted {
		root := find(i)
		k, ok := at[root]
		if !ok {
			k = len(out)
			at[root] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], f)
	}
	return out
}

// malosOverlap reports whether two files' malo_id bounds may share a value.
func malosOverlap(a, b ColdFile) bool {
	if a.MaloMin == nil || a.MaloMax == nil || b.MaloMin == nil || b.MaloMax == nil {
		return true
	}
	return *a.MaloMin <= *b.MaloMax && *b.MaloMin <= *a.MaloMax
}

func (f ColdFile) known() bool {
	return f.FromMin != nil && f.FromMax != nil && f.VersionMin != nil && f.VersionMax != nil
}

// singleVersion reports whether statistics prove the file holds one version.
func (f ColdFile) singleVersion() bool {
	return f.VersionMin != nil && f.VersionMax != nil && *f.VersionMin == *f.VersionMax
}

// clean reports whether no resolution key can repeat in the run: one file
// holding one version or marked keys-unique, or files all holding the same
// single version ((merge key, version) is unique). byMark counts the files
// only a keys-unique mark proved.
func (r run) clean() (ok bool, byMark int) {
	if len(r) == 1 {
		f := r[0]
		if f.singleVersion() {
			return true, 0
		}
		if f.KeysUnique {
			return true, 1
		}
		return false, 0
	}
	for _, f := range r {
		if !f.singleVersion() || *f.VersionMin != *r[0].VersionMin {
			return false, 0
		}
	}
	return true, 0
}

// exclusionSplit splits a run, for resolution by exclusion, into upper,
// files whose every version lies above every version of the others, and
// base, those others, whose keys must not repeat. Then a base row is the
// answer unless upper holds its key, and among upper's rows of a key the
// highest version is. Of the splits that qualify it takes the smallest upper
// (the files whose keys every base row is checked against). byMark counts
// base files only a keys-unique mark proved; ok is false when no split
// qualifies.
func (r run) exclusionSplit() (base, upper []ColdFile, byMark int, ok bool) {
	var ceilings []uint64
	for _, f := range r {
		if f.VersionMin == nil || f.VersionMax == nil {
			return nil, nil, 0, false
		}
		ceilings = append(ceilings, *f.VersionMax)
	}
	slices.Sort(ceilings)
	ceilings = slices.Compact(ceilings)
	for i := len(ceilings) - 2; i >= 0; i-- {
		if base, upper, byMark, ok := r.splitAt(ceilings[i]); ok {
			return base, upper, byMark, true
		}
	}
	return nil, nil, 0, false
}

// splitAt splits the run into the files with versions up to top (the base)
// and those with versions all above it, if the base's keys cannot repeat.
func (r run) splitAt(top uint64) (base, upper []ColdFile, byMark int, ok bool) {
	for _, f := range r {
		switch {
		case *f.VersionMax <= top:
			base = append(base, f)
		case *f.VersionMin > top:
			upper = append(upper, f)
		default:
			return nil, nil, 0, false
		}
	}
	clean, byMark := cleanSet(base)
	if !clean {
		return nil, nil, 0, false
	}
	return base, upper, byMark, true
}

// mergeSplit splits a run, for resolution by merge, into a base whose keys
// cannot repeat — the largest files first, as long as that holds — and the
// other files, whatever their versions, holding fewer rows than the base.
// Then a base row whose key the others do not hold is the answer, and the
// rest (the base rows of the others' keys, and the others' rows) is ranked:
// a few rows where the versions are not ordered by file, as for late
// corrections restating a compacted month at the versions of its days.
// byMark counts base files only a keys-unique mark proved.
func (r run) mergeSplit() (base, other []ColdFile, byMark int, ok bool) {
	bySize := slices.SortedStableFunc(slices.Values(r), func(a, b ColdFile) int { return cmp.Compare(b.Records, a.Records) })
	var baseRows, otherRows int64
	for _, f := range bySize {
		if clean, _ := cleanSet(append(slices.Clone(base), f)); clean {
			base, baseRows = append(base, f), baseRows+f.Records
		} else {
			other, otherRows = append(other, f), otherRows+f.Records
		}
	}
	if len(base) == 0 || len(other) == 0 || otherRows > baseRows {
		return nil, nil, 0, false
	}
	_, byMark = cleanSet(base)
	return base, other, byMark, true
}

// cleanSet reports whether no resolution key can repeat among files: each
// of their own runs clean. byMark counts the files only a keys-unique mark proved.
func cleanSet(files []ColdFile) (ok bool, byMark int) {
	for _, sub := range runs(files) {
		clean, marked := sub.clean()
		if !clean {
			return false, 0
		}
		byMark += marked
	}
	return true, byMark
}
