package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// passKey is the name a golden stops after a pass by: its name's first word
// (gate, expand, find, stored, extract, system, pin, split, elide, render).
func passKey(p pass) string { return strings.Fields(p.name)[0] }

// passIndex is the index in passes of the pass key names; an error naming
// the valid keys when it names none.
func passIndex(key string) (int, error) {
	var keys []string
	for i, p := range passes {
		if passKey(p) == key {
			return i, nil
		}
		keys = append(keys, passKey(p))
	}
	return -1, fmt.Errorf("stop=%s is not a pass; the passes are %s", key, strings.Join(keys, ", "))
}

// TestStopNamesAPass: every pass has its own key, and a golden stopping
// after a pass that does not exist is told which do.
func TestStopNamesAPass(t *testing.T) {
	seen := map[string]bool{}
	for i, p := range passes {
		require.False(t, seen[passKey(p)], p.name)
		seen[passKey(p)] = true
		at, err := passIndex(passKey(p))
		require.NoError(t, err)
		require.Equal(t, i, at)
	}
	_, err := passIndex("bounds")
	require.EqualError(t, err, "stop=bounds is not a pass; the passes are gate, expand, find, stored, group, extract, system, pin, split, elide, hot, drop, finite, latest, render")
}

// stopped plans in through the pass at index last and prints the plan as it
// stands then: the statement as the tree now reads (references still named),
// then per reference what the passes run so far decided. Stopped after
// render, it prints what a whole plan prints.
func (g *golden) stopped(ctx context.Context, t *testing.T, in Input, last int) string {
	pl, err := newPlanning(ctx, in)
	if err != nil {
		return "error: " + err.Error()
	}
	defer pl.out.Release()
	if err := pl.run(ctx, passes[last].name); err != nil {
		return "error: " + err.Error()
	}
	if passes[last].name == "render" {
		return strings.Join(append(pl.out.Explain, "provenance: "+pl.out.Provenance.String(), g.readable(pl.out.SQL)), "\n")
	}
	ran := func(name string) bool {
		return slices.IndexFunc(passes, func(p pass) bool { return p.name == name }) <= last
	}
	sql, err := deserialize(ctx, pl.conn, pl.root)
	if err != nil {
		t.Fatalf("the tree after %s does not render: %v", passes[last].name, err)
	}
	out := []string{"after " + passes[last].name + ":", g.readable(sql)}
	for _, ref := range pl.refs {
		out = append(out, describeRef(ref, ran)...)
	}
	for _, s := range pl.system {
		out = append(out, fmt.Sprintf("system table %s.%s.%s", s.n.CatalogName, s.n.SchemaName, s.n.TableName))
	}
	return strings.Join(out, "\n")
}

// describeRef is what the passes that ran decided for one reference.
func describeRef(ref *reference, ran func(string) bool) []string {
	resolved := map[bool]string{true: " resolved", false: ""}[ref.rel.resolved]
	out := []string{fmt.Sprintf("%s (%s%s)", ref.n.Name(), ref.rel.table.Config.Name(), resolved)}
	if ran("extract bounds") {
		out = append(out, "  from "+ref.rng.String()+equalities(ref.eq))
	}
	if ran("pin snapshot and watermark") {
		out = append(out, fmt.Sprintf("  pinned: snapshot %d, watermark %s", ref.pin.snapshot, ref.pin.watermark.UTC().Format("2006-01-02T15:04:05Z")))
	}
	if !ran("split tiers") {
		return out
	}
	if c := ref.cold; c != nil {
		out = append(out, fmt.Sprintf("  cold: from %s, %d files kept, %d pruned, through %s", c.rng, len(c.plan.Files), c.plan.Pruned, c.path.Name()))
		if ran("elide or resolve") {
			out = append(out, readLines(c.read)...)
		}
	} else {
		out = append(out, "  cold: not read")
	}
	if h := ref.hot; h != nil {
		var names []string
		for _, s := range h.scans {
			names = append(names, s.Table)
		}
		out = append(out, fmt.Sprintf("  hot: from %s, scans %s, through %s", h.rng, strings.Join(names, ", "), h.path.Name()))
	} else {
		out = append(out, "  hot: not read")
	}
	return out
}

// equalities is " · k = v, …" in key order ("" when none).
func equalities(eq map[string]string) string {
	if len(eq) == 0 {
		return ""
	}
	var kv []string
	for k, v := range eq {
		kv = append(kv, k+" = "+sqltext.String(v))
	}
	sort.Strings(kv)
	return " · " + strings.Join(kv, ", ")
}

// readLines are elide or resolve's decision for a cold half, one line per
// way files are read, naming the files.
func readLines(r coldRead) []string {
	var out []string
	for _, part := range []struct {
		how   string
		files []ColdFile
	}{
		{"clean (resolution elided)", r.clean},
		{"by exclusion, base", r.base},
		{"by exclusion, higher versions", r.upper},
		{"by merge, base", r.mergeBase},
		{"by merge, other versions", r.mergeOther},
		{"ranked", r.ranked},
		{"superseded, not read", r.skipped},
	} {
		if len(part.files) == 0 {
			continue
		}
		names := make([]string, len(part.files))
		for i, f := range part.files {
			names[i] = filepath.Base(f.Path)
		}
		out = append(out, "    "+part.how+": "+strings.Join(names, ", "))
	}
	if r.byMark > 0 {
		out = append(out, fmt.Sprintf("    %d files proven by their keys-unique mark", r.byMark))
	}
	return out
}
