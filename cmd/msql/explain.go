package main

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// fileList is a list of Parquet paths in the rewritten SQL of an EXPLAIN, as
// the engine writes read_parquet's first argument.
var fileList = regexp.MustCompile(`\[('(?:[^']|'')*\.parquet'(?:, )?)+\]`)

var quotedPath = regexp.MustCompile(`'((?:[^']|'')*)'`)

// condenseExplain replaces every list of data files in an EXPLAIN's rewritten
// SQL by its count per partition: a statement over a year reads hundreds of
// files, and their paths bury the plan. .explain --verbose keeps them.
func condenseExplain(text string) string {
	condensed := false
	out := fileList.ReplaceAllStringFunc(text, func(list string) string {
		condensed = true
		var paths []string
		for _, m := range quotedPath.FindAllStringSubmatch(list, -1) {
			paths = append(paths, strings.ReplaceAll(m[1], "''", "'"))
		}
		return "[‹" + filesPerPartition(paths) + "›]"
	})
	if condensed {
		out = strings.Replace(out, "\nrewritten SQL:\n", "\nrewritten SQL (data files counted per partition; .explain --verbose lists them):\n", 1)
	}
	return out
}

// filesPerPartition is "N files: from_month=2025-10 ×3, …" — the partition
// is the path below the table's data directory, as Iceberg lays files out.
func filesPerPartition(paths []string) string {
	count := map[string]int{}
	for _, p := range paths {
		dir := path.Dir(p)
		if _, below, ok := strings.Cut(dir, "/data/"); ok {
			dir = below
		} else {
			dir = path.Base(dir)
		}
		count[dir]++
	}
	parts := make([]string, 0, len(count))
	for _, dir := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", dir, count[dir]))
	}
	noun := "files"
	if len(paths) == 1 {
		noun = "file"
	}
	return fmt.Sprintf("%d %s: %s", len(paths), noun, strings.Join(parts, ", "))
}
