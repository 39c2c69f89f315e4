package store

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/hot"
)

// HotTierOf adapts a hot.Store to the engine, which knows only its own
// interfaces: the store is where the tiers and the engine are put together.
func HotTierOf(s *hot.Store) engine.HotTier { return hotTier{s} }

type hotTier struct{ s *hot.Store }

func (h hotTier) request(req engine.HotScan) hot.ScanRequest {
	table := req.Table
	if table == h.s.Config().Name() {
		table = ""
	}
	return hot.ScanRequest{From: req.From, To: req.To, Eq: req.Eq, MaxVersion: req.MaxVersion,
		RecordedAtMax: req.RecordedAtMax, Columns: req.Columns, Table: table, Unordered: true}
}

// Pages reads in storage order: DuckDB does not need key order, and block
// pages cost half of an index walk.
func (h hotTier) Pages(req engine.HotScan) (engine.RowPages, error) {
	p, err := h.s.Pager(h.request(req))
	if err != nil {
		return nil, archivedUnder(err)
	}
	return hotPages{p}, nil
}

// hotPages is a hot.Pager as the engine reads it.
type hotPages struct{ p *hot.Pager }

func (p hotPages) Next(ctx context.Context, buf []meterstore.Row) ([]meterstore.Row, error) {
	rows, err := p.p.Next(ctx, buf)
	return rows, archivedUnder(err)
}

func (p hotPages) NextScaled(ctx context.Context, buf []meterstore.Row, values []int64) ([]meterstore.Row, []int64, error) {
	rows, values, err := p.p.NextScaled(ctx, buf, values)
	return rows, values, archivedUnder(err)
}

// archivedUnder marks a scan that failed because an archival detached or
// dropped the partition it read (hot.ErrPartitionDetached) as the boundary
// moving under the statement (engine.ErrBoundaryMoved): the engine runs the
// statement again, and a server that cannot says so (SQLSTATE 40001).
func archivedUnder(err error) error {
	if errors.Is(err, hot.ErrPartitionDetached) && !errors.Is(err, engine.ErrBoundaryMoved) {
		return fmt.Errorf("%w (%w)", err, engine.ErrBoundaryMoved)
	}
	return err
}

func (h hotTier) ScanSQL(req engine.HotScan) string { return h.s.ScanSQL(h.request(req)) }

func (h hotTier) ScanQuery(req engine.HotScan) (string, error) { return h.s.Query(h.request(req)) }

func (h hotTier) PartialsQuery(scans []engine.HotScan, partials []engine.Partial, resolved bool) (string, error) {
	reqs := make([]hot.ScanRequest, len(scans))
	for i, sc := range scans {
		reqs[i] = h.request(sc)
	}
	ps := make([]hot.Partial, len(partials))
	for i, p := range partials {
		ps[i] = hot.Partial(p)
	}
	return h.s.PartialsQuery(reqs, ps, resolved)
}

func (h hotTier) TextRows(ctx context.Context, q string) ([][]*string, error) {
	rows, err := h.s.TextRows(ctx, q)
	return rows, archivedUnder(err)
}

func (h hotTier) RowsBelow(ctx context.Context, w time.Time) (int64, error) {
	return h.s.RowsBelow(ctx, w)
}

func (h hotTier) Detached(ctx context.Context) ([]engine.DetachedPartition, error) {
	ps, err := h.s.DetachedPartitions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]engine.DetachedPartition, len(ps))
	for i, p := range ps {
		out[i] = engine.DetachedPartition{Name: p.Name, From: p.From, To: p.To}
	}
	return out, nil
}

// PostgresConnOf is the pool's PostgreSQL as the engine's postgres extension
// reaches it: the same host, database, role and run-time parameters, and an
// sslmode that asks for what the pool's TLS settings ask for.
func PostgresConnOf(pool *pgxpool.Pool) engine.PostgresConn {
	c := pool.Config().ConnConfig
	out := engine.PostgresConn{Host: c.Host, Port: c.Port, Database: c.Database, User: c.User, Password: c.Password,
		SSLMode: sslMode(c.TLSConfig, c.Fallbacks)}
	for k, v := range c.RuntimeParams {
		if out.Options == nil {
			out.Options = map[string]string{}
		}
		out.Options[k] = v
	}
	return out
}

// sslMode is the libpq sslmode of a pgx TLS configuration: pgx turns
// "prefer" into TLS with a plain fallback, "require" into TLS without
// verification, and verify-ca/verify-full into a verifying TLS.
func sslMode(tls *tls.Config, fallbacks []*pgconn.FallbackConfig) string {
	switch {
	case tls == nil:
		return "disable"
	case len(fallbacks) > 0 && fallbacks[len(fallbacks)-1].TLSConfig == nil:
		return "prefer"
	case tls.InsecureSkipVerify && tls.VerifyPeerCertificate != nil:
		return "verify-ca"
	case tls.InsecureSkipVerify:
		return "require"
	}
	return "verify-full"
}

// ColdTierOf adapts a catalog.Table to the engine.
func ColdTierOf(t *catalog.Table) engine.ColdTier { return coldTier{t: t} }

type coldTier struct {
	t          *catalog.Table
	quarantine func() []string // nil: not known
}

// Quarantine names each narrowing schema change that halts the table's
// archival (system.tables.quarantine).
func (c coldTier) Quarantine() []string {
	if c.quarantine == nil {
		return nil
	}
	return c.quarantine()
}

func (c coldTier) Watermark(ctx context.Context, snapshot int64) (int64, time.Time, error) {
	if snapshot == 0 {
		if err := c.t.Refresh(ctx); err != nil {
			return 0, time.Time{}, err
		}
		snap := c.t.CurrentSnapshotID()
		if snap == 0 {
			return 0, time.Time{}, nil
		}
		w, err := c.t.WatermarkAt(ctx, snap)
		return snap, w, err
	}
	w, err := c.t.WatermarkAt(ctx, snapshot)
	if errors.Is(err, catalog.ErrNoSnapshot) {
		// The cached metadata may predate the snapshot: look again before refusing.
		if rerr := c.t.Refresh(ctx); rerr != nil {
			return 0, time.Time{}, rerr
		}
		w, err = c.t.WatermarkAt(ctx, snapshot)
	}
	if errors.Is(err, catalog.ErrNoSnapshot) {
		return 0, time.Time{}, errors.Join(engine.ErrNoSnapshot, err)
	}
	return snapshot, w, err
}

func (c coldTier) SnapshotAt(ctx context.Context, at time.Time) (int64, error) {
	if err := c.t.Refresh(ctx); err != nil {
		return 0, err
	}
	s, err := c.t.SnapshotAt(ctx, at)
	if errors.Is(err, catalog.ErrNoSnapshot) {
		return 0, errors.Join(engine.ErrNoSnapshot, err)
	}
	if err != nil {
		return 0, err
	}
	return s.ID, nil
}

func (c coldTier) Snapshots(ctx context.Context) ([]engine.SnapshotInfo, error) {
	if err := c.t.Refresh(ctx); err != nil {
		return nil, err
	}
	snaps, err := c.t.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]engine.SnapshotInfo, len(snaps))
	for i, s := range snaps {
		out[i] = engine.SnapshotInfo{ID: s.ID, CommittedAt: s.CommittedAt, Watermark: s.Watermark, Operation: s.Operation}
	}
	return out, nil
}

func (c coldTier) Partitions(ctx context.Context) ([]engine.PartitionInfo, error) {
	if err := c.t.Refresh(ctx); err != nil {
		return nil, err
	}
	ps, err := c.t.Partitions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]engine.PartitionInfo, len(ps))
	for i, p := range ps {
		out[i] = engine.PartitionInfo{Name: p.Name, Month: p.Month, Files: p.Files, Rows: p.Rows, Bytes: p.Bytes, Closed: p.Closed,
			Compacted: p.Compacted, LastCompaction: p.LastCompaction, NewestUncompacted: p.NewestUncompacted}
	}
	return out, nil
}

func (c coldTier) DataDirectory() string {
	loc := c.t.Iceberg().Location()
	if !strings.HasPrefix(loc, "file://") && !strings.HasPrefix(loc, "/") {
		return loc
	}
	return catalog.LocalPath(loc)
}

func (c coldTier) Plan(ctx context.Context, snapshot int64, from, to time.Time, eq map[string]string) (engine.ColdPlan, error) {
	if snapshot == 0 {
		return engine.ColdPlan{}, nil
	}
	snap := snapshot
	files, planned, err := c.t.PlanFiles(ctx, catalog.PlanRequest{SnapshotID: &snap, From: from, To: to, Eq: eq})
	if err != nil {
		return engine.ColdPlan{}, err
	}
	total, err := c.t.SnapshotFileCount(ctx, planned)
	if err != nil {
		return engine.ColdPlan{}, err
	}
	tbl := c.t.Iceberg()
	out := engine.ColdPlan{SnapshotID: planned, Pruned: total - len(files), MetadataLocation: tbl.MetadataLocation(), StoredNames: map[int]string{}}
	for _, f := range tbl.Schema().Fields() {
		out.StoredNames[f.ID] = f.Name
	}
	for _, f := range files {
		out.Files = append(out.Files, engineColdFile(f))
	}
	return out, nil
}

// engineColdFile is what the engine's planner knows of the cold file f.
func engineColdFile(f catalog.DataFile) engine.ColdFile {
	cf := engine.ColdFile{Path: f.Path, Records: f.Records, FromMin: f.FromMin, FromMax: f.FromMax,
		VersionMin: f.VersionMin, VersionMax: f.VersionMax, KeysUnique: f.KeysUnique, Superseded: f.Superseded, FieldIDs: f.FieldIDs, NamesAsIDs: f.NamesAsIDs,
		BalancingDay: f.BalancingDay}
	if b, ok := f.TextBounds["malo_id"]; ok {
		cf.MaloMin, cf.MaloMax = &b[0], &b[1]
	}
	return cf
}

func (c coldTier) ReadFile(ctx context.Context, path string) (engine.RowPages, error) {
	return c.t.FileRows(ctx, path)
}
