package engine

import "sort"

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
	var known, unknown []ColdFile
	for _, f := range files {
		if f.FromMin == nil || f.FromMax == nil || f.VersionMin == nil || f.VersionMax == nil {
			unknown = append(unknown, f)
		} else {
			known = append(known, f)
		}
	}
	if len(unknown) > 0 {
		return nil, files
	}
	sort.SliceStable(known, func(i, j int) bool { return known[i].FromMin.Before(*known[j].FromMin) })
	for i := 0; i < len(known); {
		run := []ColdFile{known[i]}
		end := *known[i].FromMax
		j := i + 1
		for ; j < len(known) && !known[j].FromMin.After(end); j++ {
			run = append(run, known[j])
			if known[j].FromMax.After(end) {
				end = *known[j].FromMax
			}
		}
		if singleVersion(run) {
			clean = append(clean, run...)
		} else {
			dirty = append(dirty, run...)
		}
		i = j
	}
	return clean, dirty
}

func singleVersion(run []ColdFile) bool {
	v := *run[0].VersionMin
	for _, f := range run {
		if *f.VersionMin != v || *f.VersionMax != v {
			return false
		}
	}
	return true
}
