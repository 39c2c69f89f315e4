package plan

import (
	"context"
	"fmt"
	"sort"

	"github.com/meterstore/meterstore"
)

// Feeder hands a confined statement's cold half to a database the confined
// one cannot name: the confined database opens no file, so the engine's own
// database reads the planned files — with the scope, range and ceilings in
// the reader's filter and resolution as planned — and the statement reads
// the rows through the relation Feed returns, valid until Unfeed(token).
type Feeder interface {
	// Streams is how many of a half's relations the Feeder runs at once:
	// the half's clean files are split into up to that many relations.
	Streams() int
	// Feed takes relations whose UNION ALL is the cold half; each shares no
	// resolution key with another, so each may run on its own.
	Feed(ctx context.Context, cfg meterstore.TableConfig, relations []string) (sql, token string)
	Unfeed(token string)
}

// minFilesPerStream is the fewest clean files a fed relation of its own is
// worth: each relation is a statement the engine's database prepares.
const minFilesPerStream = 8

// coldParts is the cold half's relations as the statement reads them: as
// rendered, or — with a Feeder — one fed relation.
func (pl *planning) coldParts(ctx context.Context, cfg meterstore.TableConfig, parts []string) []string {
	f := pl.in.Feeder
	if f == nil || len(parts) == 0 {
		return parts
	}
	pl.out.feeder = f
	return []string{pl.out.feed(ctx, cfg, parts)}
}

// fedHalf is a cold half the Feeder runs: what Feed was given, kept so that
// a reused plan (Again) feeds it anew, and the token it lives under.
type fedHalf struct {
	cfg       meterstore.TableConfig
	relations []string
	token     string
}

// feed hands the relations of a cold half to the plan's Feeder until
// Release; the relation the statement reads them through.
func (p *Plan) feed(ctx context.Context, cfg meterstore.TableConfig, relations []string) string {
	sql, tok := p.feeder.Feed(ctx, cfg, relations)
	p.fed = append(p.fed, fedHalf{cfg: cfg, relations: relations, token: tok})
	return sql
}

// fedNote is the cold line's note on a half fed as several relations.
func (pl *planning) fedNote(parts []string) string {
	if pl.in.Feeder == nil || len(parts) < 2 {
		return ""
	}
	return fmt.Sprintf("; fed as %d relations, up to %d at once", len(parts), pl.in.Feeder.Streams())
}

// coldStreams is how many relations c's clean files are rendered as: one,
// unless a Feeder runs them at once and c's path reads any subset of its
// files (iceberg_scan selects a subset by statistics, which not every split
// has).
func (pl *planning) coldStreams(c *coldHalf) int {
	f := pl.in.Feeder
	if f == nil {
		return 1
	}
	switch c.path.(type) {
	case readParquetPath, coldScanPath:
		return f.Streams()
	}
	return 1
}

// splitFiles deals files into at most n groups of at least minFilesPerStream
// files, balanced by their records; each group keeps the files' order.
func splitFiles(files []ColdFile, n int) [][]ColdFile {
	n = min(n, len(files)/minFilesPerStream)
	if n <= 1 {
		return [][]ColdFile{files}
	}
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return files[order[a]].Records > files[order[b]].Records })
	groupOf := make([]int, len(files))
	load := make([]int64, n)
	for _, i := range order {
		g := 0
		for j := range load {
			if load[j] < load[g] {
				g = j
			}
		}
		groupOf[i] = g
		load[g] += max(files[i].Records, 1)
	}
	out := make([][]ColdFile, n)
	for i, f := range files {
		out[groupOf[i]] = append(out[groupOf[i]], f)
	}
	return out
}
