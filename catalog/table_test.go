package catalog

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// heldLoad is the real catalog whose next LoadTable, once armed, returns only
// when the test releases it: the table as it was read stays in flight while
// the test commits.
type heldLoad struct {
	icecat.Catalog
	armed           atomic.Bool
	loaded, release chan struct{}
}

func holdNextLoad(c *Catalog) *heldLoad {
	h := &heldLoad{Catalog: c.cat, loaded: make(chan struct{}), release: make(chan struct{})}
	h.armed.Store(true)
	c.cat = h
	return h
}

func (h *heldLoad) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	tbl, err := h.Catalog.LoadTable(ctx, ident)
	if h.armed.CompareAndSwap(true, false) {
		close(h.loaded)
		<-h.release
	}
	return tbl, err
}

func TestRefreshOverlappingACommitKeepsTheCommit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	day := func(n int) time.Time { return day0.Add(time.Duration(n) * 24 * time.Hour) }
	var rows int
	commitDay := func(n int) CommitResult {
		page := genRows(day(n), 96, opA, 1)
		res, err := tb.CommitWindow(ctx, &SliceSource{Rows: page}, day(n+1))
		require.NoError(t, err, "commit day %d on the handle", n)
		rows += len(page)
		return res
	}
	// Day 0 is committed through another handle, so this handle is behind
	// and its Refresh loads the table (a current handle is kept unread).
	other, err := e.cat.Table(ctx, e.cfg)
	require.NoError(t, err)
	page := genRows(day(0), 96, opA, 1)
	_, err = other.CommitWindow(ctx, &SliceSource{Rows: page}, day(1))
	require.NoError(t, err)
	rows += len(page)

	held := holdNextLoad(e.cat)
	refreshed := make(chan error, 1)
	go func() { refreshed <- tb.Refresh(ctx) }()
	<-held.loaded // the refresh has read the table as it was before the commit
	res := commitDay(1)
	close(held.release)
	require.NoError(t, <-refreshed)

	require.Equal(t, res.SnapshotID, tb.CurrentSnapshotID(), "the refresh that read the table before the commit ended after it")
	commitDay(2)
	require.Len(t, readAll(t, tb), rows)
}

func TestRefreshFollowsARecreatedTable(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: genRows(day0, 4, opA, 1)}, day0.Add(24*time.Hour))
	require.NoError(t, err)

	require.NoError(t, e.cat.PurgeTable(ctx, e.cfg))
	again, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	require.NoError(t, tb.Refresh(ctx))

	require.Equal(t, again.Iceberg().Metadata().TableUUID(), tb.Iceberg().Metadata().TableUUID(),
		"a table dropped and created again is a new chain of metadata; the handle follows it")
	require.Zero(t, tb.CurrentSnapshotID())
}
