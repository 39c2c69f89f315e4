package engine

import (
	"context"
	"sort"
)

// coldRead is how a cold half's files are read: the runs statistics prove
// correction-free as they are, the others resolved (or, for the raw relation,
// as they are too).
type coldRead struct {
	clean []ColdFile
	dirty []ColdFile
	how   resolution // for dirty
	upper []ColdFile // byExclusion: the dirty runs' files of higher versions
}

// resolution is how a cold half's dirty runs are resolved.
type resolution uint8

const (
	unresolved  resolution = iota // readings_versions: every version is the answer
	byExclusion                   // every file holds one version: keep a row unless a higher version holds its key
	ranked                        // resolution.sql's ROW_NUMBER() over every row
)

// elideOrResolve decides, for each cold half, from the planned files and
// their statistics alone, which runs need resolution and how.
func elideOrResolve(_ context.Context, pl *planning) error {
	for _, ref := range pl.refs {
		if ref.cold != nil {
			ref.cold.read = readFor(ref.cold.plan.Files, ref.rel.resolved)
			if ref.rel.resolved {
				pl.out.prov.ResolvedFiles += len(ref.cold.read.dirty)
			}
		}
	}
	return nil
}

// readFor decides how files are read for a resolved relation or a raw one.
func readFor(files []ColdFile, resolved bool) coldRead {
	clean, dirty := elide(files)
	r := coldRead{clean: clean, dirty: dirty}
	if len(dirty) == 0 || !resolved {
		return r
	}
	if _, upper, single := splitByVersion(dirty); single {
		r.how, r.upper = byExclusion, upper
	} else {
		r.how = ranked
	}
	return r
}

// elide splits the planned cold files into those whose rows need no resolution
// and those that do, from Iceberg statistics alone (design invariant 8):
//
//  1. files are grouped into runs whose "from" bounds overlap (transitively);
//  2. a run is clean when every file in it holds a single version (min = max)
//     and all files of the run carry that same version.
//
// "from" is in the merge key, so two runs that do not overlap cannot share a
// key, and a clean run cannot hold two versions of one reading. A file missing a
// statistic is treated as overlapping every other file and as holding many
// versions: a missing statistic proves nothing. Partition values are never used
// (a table repartitioned out of band could carry a field on an attribute column).
func elide(files []ColdFile) (clean, dirty []ColdFile) {
	for _, run := range runs(files) {
		if run.singleVersion() {
			clean = append(clean, run...)
		} else {
			dirty = append(dirty, run...)
		}
	}
	return clean, dirty
}

// run is a maximal group of files whose "from" bounds overlap transitively.
type run []ColdFile

// runs groups files into runs; with any statistic missing, all files are one run.
func runs(files []ColdFile) []run {
	for _, f := range files {
		if !f.known() {
			return []run{files}
		}
	}
	known := append([]ColdFile(nil), files...)
	sort.SliceStable(known, func(i, j int) bool { return known[i].FromMin.Before(*known[j].FromMin) })
	var out []run
	for i := 0; i < len(known); {
		r := run{known[i]}
		end := *known[i].FromMax
		j := i + 1
		for ; j < len(known) && !known[j].FromMin.After(end); j++ {
			r = append(r, known[j])
			if known[j].FromMax.After(end) {
				end = *known[j].FromMax
			}
		}
		out = append(out, r)
		i = j
	}
	return out
}

func (f ColdFile) known() bool {
	return f.FromMin != nil && f.FromMax != nil && f.VersionMin != nil && f.VersionMax != nil
}

func (r run) singleVersion() bool {
	if !r[0].known() {
		return false
	}
	v := *r[0].VersionMin
	for _, f := range r {
		if !f.known() || *f.VersionMin != v || *f.VersionMax != v {
			return false
		}
	}
	return true
}

// splitByVersion divides dirty files for resolution by exclusion: in each run,
// the files of the run's lowest version (the base: usually the whole window as
// archived) and the files of higher versions (the corrections: usually small).
// It reports false unless statistics prove that every file holds one version.
func splitByVersion(dirty []ColdFile) (base, upper []ColdFile, ok bool) {
	for _, r := range runs(dirty) {
		lowest := ^uint64(0)
		for _, f := range r {
			if !f.known() || *f.VersionMin != *f.VersionMax {
				return nil, nil, false
			}
			lowest = min(lowest, *f.VersionMin)
		}
		for _, f := range r {
			if *f.VersionMin == lowest {
				base = append(base, f)
			} else {
				upper = append(upper, f)
			}
		}
	}
	return base, upper, true
}
