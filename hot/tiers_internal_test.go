package hot

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// TestMovingRowsOutliveADroppedPartition: an archival that commits its window
// drops the detached partition, possibly between a hot write listing the
// detached partitions and reading them. The write's transaction survives and
// lists again (the window's rows are in the cold tier by then), instead of
// failing with undefined_table — as a write racing archival did in the proof
// suite ("read detached partitions: ERROR: relation
// "readings_versions_2025_10_23_0000" does not exist (SQLSTATE 42P01)").
// A write lists them with its prior read, under the parent's lock — which
// keeps partitions from being detached, not detached ones from being dropped
// — so the drop may come before the first read too.
func TestMovingRowsOutliveADroppedPartition(t *testing.T) {
	for _, c := range []struct {
		name   string
		before int // the savepoint's statement the drop comes before
		listed func(Partition) map[string]bool
	}{
		{"listed in the savepoint", 2, func(Partition) map[string]bool { return nil }},
		{"listed with the prior read", 1, func(p Partition) map[string]bool { return map[string]bool{p.Name: true} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st, pool, day := storeWithADetachedPartition(t)
			parts, err := st.DetachedPartitions(ctx)
			require.NoError(t, err)
			require.Len(t, parts, 1)
			tx, err := pool.Begin(ctx)
			require.NoError(t, err)
			defer tx.Rollback(ctx)
			race := &droppingTx{Tx: tx, before: c.before, drop: func() error { return st.Drop(ctx, parts[0]) }}
			rows, err := st.movingRows(ctx, race, c.listed(parts[0]), []string{"41373559241"}, day, day.Add(24*time.Hour))
			require.NoError(t, err)
			require.Empty(t, rows)
			require.Equal(t, 2, race.savepoints, "found dropped, listed again")
			var one int
			require.NoError(t, tx.QueryRow(ctx, "SELECT 1").Scan(&one), "the write's transaction is alive")
		})
	}
}

// TestMovingRowsOfAListWithNoneSendNothing: a write that listed no detached
// partition reads none, and sends no statement for them.
func TestMovingRowsOfAListWithNoneSendNothing(t *testing.T) {
	ctx := context.Background()
	st, pool, day := storeWithADetachedPartition(t)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	counted := &droppingTx{Tx: tx, before: 1, drop: func() error { return nil }}
	rows, err := st.movingRows(ctx, counted, map[string]bool{}, []string{"41373559241"}, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Empty(t, rows)
	require.Zero(t, counted.savepoints)
	rows, err = st.movingRows(ctx, counted, nil, []string{"41373559241"}, day, day.Add(24*time.Hour))
	require.NoError(t, err)
	require.Empty(t, rows)
	require.Equal(t, 1, counted.savepoints, "not listed: listed in a savepoint")
}

// storeWithADetachedPartition is a table with its first partition detached.
func storeWithADetachedPartition(t *testing.T) (*Store, *pgxpool.Pool, time.Time) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	cfg, err := meterstore.TableSpec{Name: "readings_versions"}.Build()
	require.NoError(t, err)
	st := New(pool, cfg)
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	require.NoError(t, st.CreateTables(ctx, day))
	parts, err := st.Partitions(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, parts)
	require.NoError(t, st.Detach(ctx, parts[0]))
	return st, pool, day
}

// droppingTx drops a partition through another connection just before the
// first savepoint's statement number before: the second is between listing
// the detached partitions and reading them, the first before reading ones
// listed earlier.
type droppingTx struct {
	pgx.Tx
	before     int
	drop       func() error
	savepoints int
}

func (d *droppingTx) Begin(ctx context.Context) (pgx.Tx, error) {
	sp, err := d.Tx.Begin(ctx)
	d.savepoints++
	if err != nil || d.savepoints > 1 {
		return sp, err
	}
	return &dropBefore{Tx: sp, at: d.before, drop: d.drop}, nil
}

type dropBefore struct {
	pgx.Tx
	at      int
	drop    func() error
	queries int
}

func (d *dropBefore) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if d.queries++; d.queries == d.at {
		if err := d.drop(); err != nil {
			return nil, err
		}
	}
	return d.Tx.Query(ctx, sql, args...)
}
