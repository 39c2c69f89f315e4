package engine

import (
	"fmt"
	"sort"
	"strings"

	"meterstore"
)

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

// resolveByExclusion is resolution.sql's answer — per resolution key, the row
// of the highest version — for runs of single-version files, computed without
// ranking every row: a row is kept unless a file of a higher version in its run
// holds its key, and only those (small) correction files are aggregated. A hash
// join against them costs a fraction of ROW_NUMBER() over every row of the
// window. Exact because (merge key, version) is unique, so a key's highest
// version is one row; tested against the rendered resolution.sql on generated
// data (TestResolutionByExclusionMatchesResolutionSQL).
func resolveByExclusion(cfg meterstore.TableConfig, all, upper []ColdFile, where string) string {
	key := cfg.ResolutionKey()
	cols := cfg.ColumnNames()
	proj := make([]string, len(cols))
	for i, c := range cols {
		proj[i] = "_meterstore_row." + meterstore.QuoteIdent(c)
	}
	on := make([]string, len(key))
	for i, k := range key {
		q := meterstore.QuoteIdent(k)
		on[i] = fmt.Sprintf("_meterstore_row.%s IS NOT DISTINCT FROM _meterstore_newer.%s", q, q)
	}
	return fmt.Sprintf(`SELECT %s FROM (%s) AS _meterstore_row
LEFT JOIN (SELECT %s, max("version") AS _meterstore_newest FROM (%s) GROUP BY %s) AS _meterstore_newer
ON %s
WHERE _meterstore_newer._meterstore_newest IS NULL OR _meterstore_row."version" = _meterstore_newer._meterstore_newest`,
		strings.Join(proj, ", "), readParquet(cfg, all, where),
		meterstore.QuoteIdents(key), readParquet(cfg, upper, where), meterstore.QuoteIdents(key),
		strings.Join(on, " AND "))
}
