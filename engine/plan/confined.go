package plan

import (
	"net/url"
	"path/filepath"
	"sort"
	"strings"
)

// ConfinedDirs are the directories a confined database may read files
// below, sorted: per table on the local file system, the
// directory holding only rows the handle sees. A scope on one column names its
// partition directory below Iceberg's default data path; a file elsewhere
// (another layout, a scope on two columns) is read by the Go reader instead.
func ConfinedDirs(tables []*Table, scope map[string]string) []string {
	var dirs []string
	for _, t := range tables {
		d := t.Cold.DataDirectory()
		if d == "" || isRemote(d) {
			continue
		}
		d = strings.TrimSuffix(strings.TrimPrefix(d, "file://"), "/") + "/"
		switch len(scope) {
		case 0:
		case 1:
			for c, v := range scope {
				d += "data/" + url.QueryEscape(c) + "=" + url.QueryEscape(v) + "/"
			}
		default:
			continue
		}
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// readableBelow is whether DuckDB may open path in a database allowed dirs.
func readableBelow(path string, dirs []string) bool {
	if isRemote(path) {
		return false
	}
	p := filepath.Clean(strings.TrimPrefix(path, "file://"))
	for _, d := range dirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}
