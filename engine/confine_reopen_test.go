package engine_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

// TestConfinedReopenSameAnswers: with room for one confined database, two
// tenants take turns — each turn closes the other tenant's database and
// reopens its own, system tables included — and every answer equals the
// first one of that tenant, while the system tables are refreshed alongside.
func TestConfinedReopenSameAnswers(t *testing.T) {
	w := testkit.NewWorkload(0x5C)
	w.MaLos, w.Days, w.Tenants = 4, 4, 2
	a := newArchivedStore(t, w)
	ctx := context.Background()
	e := oneConfinedDatabase(t, a)
	require.NoError(t, e.RefreshSystemTables(ctx, time.Now()))

	const q = `SELECT malo_id, "from", value, (SELECT count(*) FROM system.partitions) AS parts FROM readings ORDER BY ALL`
	first := map[string][][]any{}
	for turn := range 4 {
		for _, tenant := range []string{"tenant01", "tenant02"} {
			sc, err := e.Scoped("tenant", tenant)
			require.NoError(t, err)
			res, err := sc.Query(ctx, q)
			require.NoError(t, err, "turn %d, %s", turn, tenant)
			require.NotEmpty(t, res.Rows)
			if turn == 0 {
				first[tenant] = res.Rows
				continue
			}
			require.Equal(t, first[tenant], res.Rows, "turn %d, %s: the reopened database answers as the first", turn, tenant)
		}
	}
	require.NotEqual(t, first["tenant01"], first["tenant02"])

	// Concurrently, with the refresh writing into whichever database is
	// open: each statement answers as before or is refused as busy.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, tenant := range []string{"tenant01", "tenant02"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc, err := e.Scoped("tenant", tenant)
			if err != nil {
				errs <- err
				return
			}
			for range 8 {
				res, err := sc.Query(ctx, q)
				switch {
				case errors.Is(err, engine.ErrConfinedBusy):
				case err != nil:
					errs <- err
				case !reflect.DeepEqual(res.Rows, first[tenant]):
					errs <- errors.New(tenant + ": another answer after a reopen")
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 8 {
			if err := e.RefreshSystemTables(ctx, time.Now()); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// oneConfinedDatabase is an engine over a's table with room for one confined
// database: a scope's statement closes another scope's database, and the
// next statement of that scope reopens it. Closed with the test.
func oneConfinedDatabase(t *testing.T, a *archivedStore) *engine.Engine {
	t.Helper()
	tables := []engine.Table{{Config: a.cfg, Hot: store.HotTierOf(a.tbl.Hot), Cold: store.ColdTierOf(a.tbl.Cold)}}
	e, err := engine.Open(context.Background(), engine.Config{Tables: tables, ConfinedDatabases: 1})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}
