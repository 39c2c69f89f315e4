package hot

import (
	"context"
	"fmt"
	"strings"
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

// TestConflictsAcrossTiersNameTheFirstTwentyAndCountAll: a check across the
// watermark (compaction's hold, msql verify) names every conflicting pair it
// finds, up to maxNamedConflicts, and counts them all; it named only the
// first. One pair is its own refusal, as before.
func TestConflictsAcrossTiersNameTheFirstTwentyAndCountAll(t *testing.T) {
	s := New(nil, meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	id := identity{cols: []string{"malo_id", "obis_code"}, at: []int{atMalo, atObis}}
	w := time.Date(2025, 10, 24, 0, 0, 0, 0, time.UTC)
	pairs := func(n int) ([]meterstore.Row, []*meterstore.Row) {
		var held []meterstore.Row
		var written []*meterstore.Row
		for i := range n {
			hotEnd, coldEnd := w.Add(15*time.Minute), w.Add(15*time.Minute)
			h := meterstore.Row{MaloID: fmt.Sprintf("5%010d", i), ObisCode: "1-1:1.29.0", From: w, To: &hotEnd, Version: 1}
			c := h
			c.From, c.To = w.Add(-time.Hour), &coldEnd
			held, written = append(held, h), append(written, &c)
		}
		return held, written
	}

	held, written := pairs(1)
	err := s.conflictsAcrossTiers(id, held, written, w)
	var one *OverlapError
	require.ErrorAs(t, err, &one)
	require.Contains(t, one.Detail, "malo 50000000000")

	held, written = pairs(maxNamedConflicts + 5)
	err = s.conflictsAcrossTiers(id, held, written, w)
	var all *TierConflictsError
	require.ErrorAs(t, err, &all)
	require.Equal(t, maxNamedConflicts+5, all.Total)
	require.Len(t, all.Named, maxNamedConflicts)
	require.ErrorIs(t, err, meterstore.ErrOverlap)
	require.Contains(t, err.Error(), fmt.Sprintf("%d pairs of intervals conflict across the tiering watermark (the first %d named)", maxNamedConflicts+5, maxNamedConflicts))
	for i := range maxNamedConflicts {
		require.Contains(t, err.Error(), fmt.Sprintf("malo 5%010d obis", i))
	}
	require.NotContains(t, err.Error(), fmt.Sprintf("malo 5%010d obis", maxNamedConflicts), "beyond the bound: counted, not named")
	require.Equal(t, 1, strings.Count(err.Error(), "deliver one grid per version"), "the advice once, the further pairs by rule and detail")
}
