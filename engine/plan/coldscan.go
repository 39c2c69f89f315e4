package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore"
)

// coldScanPath streams a cold half's files through meter_cold_scan, a Go table
// function reading them with the warehouse's own file IO (arrow-go's Parquet
// reader over iceberg-go's object-store client): the path for files DuckDB
// cannot open itself, object storage without the httpfs extension. Like the
// hot scan it is handed its files by a token that lives only while the
// statement runs, so a statement cannot name a file of its own.
type coldScanPath struct {
	ctx      context.Context
	register func(*Scan) string // the statement's registry of scans
	cold     ColdTier
}

// MeterColdScan is the table function a cold half reads through where
// DuckDB cannot open its files (Input.Paths: object storage without httpfs).
const MeterColdScan = "meter_cold_scan"

func (coldScanPath) Name() string { return MeterColdScan }

func (p coldScanPath) relation(cfg meterstore.TableConfig, c *coldHalf, files []ColdFile) (string, error) {
	scans := make([]HotScan, len(files))
	for i, f := range files {
		scans[i] = HotScan{Table: f.Path}
	}
	ps := &Scan{Ctx: p.ctx, Config: cfg, Scans: scans, Rows: &RowCounter{}, What: "cold scan"}
	ps.Pager = coldFiles{cold: p.cold, ps: ps}
	tok := p.register(ps)
	proj := typedProjection(cfg)
	for _, f := range files {
		if !f.BalancingDay {
			// equal to the stored column row for row, where a file holds it
			proj = computedDayProjection(cfg)
		}
	}
	return fmt.Sprintf("SELECT * FROM (SELECT %s FROM meter_cold_scan('%s'))%s", proj, tok, c.filesWhere(files)), nil
}

// coldFiles pages planned data files, one scan per file, opened with the
// statement's context.
type coldFiles struct {
	cold ColdTier
	ps   *Scan
}

func (c coldFiles) Pages(req HotScan) (RowPages, error) {
	return c.cold.ReadFile(c.ps.Ctx, req.Table)
}

// pagerFor is pager made to serve scan, a copy of the scan it was made for
// (Plan.Again): a cold half's files are opened with the context of the run
// reading them, never the finished run's the plan was made in.
func pagerFor(pager HotPager, scan *Scan) HotPager {
	if c, ok := pager.(coldFiles); ok {
		c.ps = scan
		return c
	}
	return pager
}

// coldPathFor is how a cold half reads files: the engine's chosen path where
// DuckDB opens them itself (Paths.Opens), the Go reader where it cannot. A
// confined statement's cold half takes the same path: the engine's database
// runs it (Feeder).
func (pl *planning) coldPathFor(ctx context.Context, ref *reference, files []ColdFile) ColdPath {
	if pl.in.Paths.Opens(files) {
		return pl.in.Paths.Cold
	}
	return coldScanPath{ctx: ctx, register: pl.out.register, cold: ref.rel.table.Cold}
}

// Opens is whether the session's database opens each of files itself: a
// file on the local file system, or on object storage through httpfs
// (HTTPFS). Where it does not, the Go reader reads them (meter_cold_scan).
func (p Paths) Opens(files []ColdFile) bool {
	if p.HTTPFS {
		return true
	}
	for _, f := range files {
		if IsRemote(f.Path) {
			return false
		}
	}
	return true
}

// IsRemote is whether path names a file on object storage (a URL other than
// file://) rather than the local file system.
func IsRemote(path string) bool {
	scheme, _, ok := strings.Cut(path, "://")
	return ok && !strings.EqualFold(scheme, "file")
}
