package hot_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
)

// An interval crossing a partition boundary is legal (a daily value on UTC-day
// partitions always does), but the exclusion constraints see one partition
// only: Write checks such intervals against the neighbouring partitions.
func TestOverlapAcrossPartitionBoundary(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	const v = 20260310000001
	midnight := day10.Add(24 * time.Hour) // boundary between the 10th and 11th partitions

	// An hour at 23:30–00:30 is stored.
	ds, err := st.Write(ctx, []meterstore.Row{iv(maloA, obisImport, midnight.Add(-30*time.Minute), time.Hour, "1", v)})
	require.NoError(t, err)
	require.Equal(t, meterstore.Inserted, ds[0].Effect)

	// A quarter-hour after midnight, inside that hour, lives in the next partition:
	// refused by the check across partitions (backward: an earlier straddler).
	_, err = st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, midnight.Add(15*time.Minute), "1", v)})
	var oe *hot.OverlapError
	require.ErrorAs(t, err, &oe)
	require.ErrorIs(t, err, hot.ErrOverlap)
	require.ErrorIs(t, err, hot.ErrIntegrity)
	require.Contains(t, err.Error(), "across partitions")
	require.Equal(t, int64(1), count(t, st), "nothing written")

	// Not overlapping (starts at 00:30) is fine; another version may overlap.
	_, err = st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, midnight.Add(30*time.Minute), "1", v)})
	require.NoError(t, err)
	_, err = st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, midnight.Add(15*time.Minute), "1", v+1)})
	require.NoError(t, err)
	// Another reading at the same span is fine.
	_, err = st.Write(ctx, []meterstore.Row{qh(maloB, obisImport, midnight.Add(15*time.Minute), "1", v)})
	require.NoError(t, err)

	// Forward: a stored quarter-hour after midnight, then a crossing hour over it.
	_, err = st.Write(ctx, []meterstore.Row{qh(maloC, obisImport, midnight.Add(15*time.Minute), "1", v)})
	require.NoError(t, err)
	_, err = st.Write(ctx, []meterstore.Row{iv(maloC, obisImport, midnight.Add(-30*time.Minute), time.Hour, "1", v)})
	require.ErrorAs(t, err, &oe)
	require.Equal(t, int64(5), count(t, st))

	// Both in one batch.
	_, err = st.Write(ctx, []meterstore.Row{
		iv(maloD, obisImport, midnight.Add(-30*time.Minute), time.Hour, "1", v),
		qh(maloD, obisImport, midnight, "1", v),
	})
	require.ErrorIs(t, err, hot.ErrOverlap)
	require.Equal(t, int64(5), count(t, st))

	// A daily value (Berlin day, 23:00–23:00 UTC) spanning two UTC partitions, and
	// the next day's value touching it, are both accepted.
	d1 := iv(maloD, obisExport, day10.Add(-time.Hour), 24*time.Hour, "24", v)
	d1.Resolution = ptr("P1D")
	d2 := iv(maloD, obisExport, day10.Add(23*time.Hour), 24*time.Hour, "24", v)
	d2.Resolution = ptr("P1D")
	_, err = st.Write(ctx, []meterstore.Row{d1, d2})
	require.NoError(t, err)
	// A quarter-hour inside the second day at the same version is refused.
	_, err = st.Write(ctx, []meterstore.Row{qh(maloD, obisExport, day10.Add(30*time.Hour), "1", v)})
	require.ErrorIs(t, err, hot.ErrOverlap)
	require.Equal(t, int64(7), count(t, st))
}

// The exclusion constraints compare a 64-bit hash of the reading's identity:
// tenants (an identity column) stay separate readings, and the straddle index
// exists per partition.
func TestHashedConstraintsShape(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}})
	part := st.PartitionName(day10)
	var defs []string
	rows, err := pool.Query(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'x' ORDER BY conname`, part)
	require.NoError(t, err)
	for rows.Next() {
		var d string
		require.NoError(t, rows.Scan(&d))
		defs = append(defs, d)
	}
	require.NoError(t, rows.Err())
	require.Len(t, defs, 2)
	require.Contains(t, defs[0], "hashtextextended")
	require.Contains(t, defs[0], "tenant")
	require.Contains(t, defs[0], "version")
	require.Contains(t, defs[1], "hashtextextended")
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = $1 AND indexname = $2`, part, part+"_straddle").Scan(&n))
	require.Equal(t, 1, n)
}

// A writer caches the partition list for its checks across partitions; a
// partition another process creates afterwards must still be checked — here an
// earlier one holding a monthly value that reaches over the quarter-hour
// written next.
func TestOverlapAcrossPartitionCreatedElsewhere(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	const v = 20260310000001
	_, err := st.Write(ctx, []meterstore.Row{qh(maloA, obisImport, day10, "1", v)}) // lists and caches the partitions
	require.NoError(t, err)

	other := hot.New(pool, st.Config()) // another process
	month := iv(maloD, obisImport, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 31*24*time.Hour, "720", v)
	month.Resolution = ptr("P1M")
	_, err = other.Write(ctx, []meterstore.Row{month}) // creates the partition of 1 March
	require.NoError(t, err)

	_, err = st.Write(ctx, []meterstore.Row{qh(maloD, obisImport, day10, "1", v)})
	require.ErrorIs(t, err, hot.ErrOverlap)
	require.Contains(t, err.Error(), "across partitions")
	require.Equal(t, int64(2), count(t, st))
}
