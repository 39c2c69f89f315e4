package hot_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/pglock"
)

func TestDetachThenInsertFailsLoudly(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	day11 := day10.Add(24 * time.Hour)
	_, err := st.Write(ctx, append(quarterHours(maloA, obisImport, day10, 4, 20260310000001),
		quarterHours(maloA, obisImport, day11, 4, 20260310000001)...))
	require.NoError(t, err)

	parts, err := st.Partitions(ctx)
	require.NoError(t, err)
	var p hot.Partition
	for _, x := range parts {
		if x.From.Equal(day10) {
			p = x
		}
	}
	require.Equal(t, "readings_versions_2026_03_10_0000", p.Name)
	require.True(t, p.Attached)

	require.ErrorContains(t, st.Drop(ctx, p), "attached", "an attached partition is never dropped")
	require.NoError(t, st.Detach(ctx, p))

	det, err := st.DetachedPartitions(ctx)
	require.NoError(t, err)
	require.Equal(t, []hot.Partition{{Name: p.Name, From: day10, To: day11}}, det)

	below, err := st.RowsBelow(ctx, day11)
	require.NoError(t, err)
	require.Equal(t, int64(0), below, "the detached rows are no longer in the parent")
	n, err := st.CountRows(ctx, p.Name)
	require.NoError(t, err)
	require.Equal(t, int64(4), n)

	// Through Write: refused, naming the detached partition.
	_, err = st.Write(ctx, []meterstore.Row{qh(maloB, obisImport, day10.Add(time.Hour), "1", 20260310000001)})
	require.ErrorIs(t, err, hot.ErrPartitionDetached)
	require.ErrorContains(t, err, p.Name)
	// Through another writer's raw SQL: no partition, so the insert fails rather than landing unseen.
	_, err = pool.Exec(ctx, `INSERT INTO readings_versions (malo_id, obis_code, sparte, "from", "to", value, unit, quality, source_kind, version, version_scope, recorded_at, balancing_day)
		VALUES ('51238696781', '1-0:1.29.0', 'STROM', '2026-03-10 01:00+00', '2026-03-10 01:15+00', 1, 'KWH', 'MEASURED', 'MSCONS', 20260310000001, $1, now(), '2026-03-10')`, scopeMar)
	var pg *pgconn.PgError
	require.ErrorAs(t, err, &pg)
	require.Equal(t, "23514", pg.Code)

	// The archiver reads the detached partition.
	var got []meterstore.Row
	require.NoError(t, st.Scan(ctx, hot.ScanRequest{Table: p.Name, PageRows: 3}, func(r []meterstore.Row) error { got = append(got, r...); return nil }))
	require.Len(t, got, 4)

	require.NoError(t, st.Drop(ctx, det[0]))
	det, err = st.DetachedPartitions(ctx)
	require.NoError(t, err)
	require.Empty(t, det)
	require.Equal(t, int64(4), count(t, st))
}

func TestArchiveLease(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	l, ok, err := st.TryArchiveLease(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok2, err := st.TryArchiveLease(ctx)
	require.NoError(t, err)
	require.False(t, ok2, "a contended lease is a normal outcome")
	l.Release()
	l, ok, err = st.TryArchiveLease(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	l.Release()
}

func TestIntegrityConstraintsOff(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions", DisableIntegrityConstraints: true})
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'x'`).Scan(&n))
	require.Zero(t, n)
	_, err := st.Write(ctx, append(quarterHours(maloA, obisImport, day10.Add(15*time.Minute), 4, 20260310000001),
		iv(maloA, obisImport, day10, time.Hour, "1", 20260310000001)))
	require.NoError(t, err, "detection, not refusal")
}

// TestCreateTablesSkipsADetachedWindow: an interrupted archival run leaves a
// detached partition near now; opening the store again must not fail on it.
func TestCreateTablesSkipsADetachedWindow(t *testing.T) {
	ctx := context.Background()
	now := testNow
	s, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	parts, err := s.Partitions(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Detach(ctx, parts[0]))
	require.NoError(t, s.CreateTables(ctx, now), "pre-creation leaves the detached window alone")
	det, err := s.DetachedPartitions(ctx)
	require.NoError(t, err)
	require.Len(t, det, 1)
	require.ErrorIs(t, s.EnsurePartitions(ctx, parts[0].From, parts[0].To), hot.ErrPartitionDetached, "a write there is still refused")
}

// TestClaimBelowRefusesEveryRowBelowIt: a claim detaches the partitions below
// it and from then on refuses, with ErrArchivedRange, a partition created there
// and a row written there — also by a writer whose cache still knows the
// claimed partition, also by raw SQL. A lower claim withdraws the refusal
// above it; a zero claim withdraws it all.
func TestClaimBelowRefusesEveryRowBelowIt(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	day11 := day10.Add(24 * time.Hour)
	other := hot.New(pool, st.Config()) // another process, its partition cache warm
	_, err := other.Write(ctx, quarterHours(maloA, obisImport, day10, 4, 20260310000001))
	require.NoError(t, err)
	_, err = st.Write(ctx, quarterHours(maloA, obisImport, day11, 4, 20260310000001))
	require.NoError(t, err)

	lease, ok, err := st.TryArchiveLease(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	defer lease.Release()
	claimed, err := st.ClaimBelow(ctx, lease, day11)
	require.NoError(t, err)
	names := func(ps []hot.Partition) (out []string) {
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	require.Equal(t, []string{"readings_versions_2026_03_09_0000", "readings_versions_2026_03_10_0000"}, names(claimed),
		"every attached partition below the claim, the empty pre-created one too")
	det, err := st.DetachedPartitions(ctx)
	require.NoError(t, err)
	require.Equal(t, names(claimed), names(det))
	for _, p := range claimed {
		require.NoError(t, st.Drop(ctx, p))
	}

	row := func(at time.Time) []meterstore.Row {
		return []meterstore.Row{qh(maloB, obisImport, at, "1", 20260310000001)}
	}
	_, err = st.Write(ctx, row(day10.Add(-5*24*time.Hour)))
	require.ErrorIs(t, err, hot.ErrArchivedRange, "no partition is created below the claim")
	require.ErrorIs(t, err, hot.ErrPartitionDetached, "Append re-routes on it")
	_, err = other.Write(ctx, row(day10.Add(time.Hour)))
	require.ErrorIs(t, err, hot.ErrArchivedRange, "a cached partition start does not let a row below the claim through")
	_, err = pool.Exec(ctx, `INSERT INTO readings_versions (malo_id, obis_code, sparte, "from", "to", value, unit, quality, source_kind, version, version_scope, recorded_at, balancing_day)
		VALUES ('51238696781', '1-0:1.29.0', 'STROM', '2026-03-10 01:00+00', '2026-03-10 01:15+00', 1, 'KWH', 'MEASURED', 'MSCONS', 20260310000001, $1, now(), '2026-03-10')`, scopeMar)
	var pg *pgconn.PgError
	require.ErrorAs(t, err, &pg, "raw SQL below the claim fails too")
	require.Equal(t, "23514", pg.Code)
	_, err = st.Write(ctx, row(day11.Add(time.Hour)))
	require.NoError(t, err, "at and above the claim, writes go on")
	require.NoError(t, st.CreateTables(ctx, day10), "pre-creation skips the claimed range")

	again, err := st.ClaimBelow(ctx, lease, day11)
	require.NoError(t, err)
	require.Empty(t, again, "claiming the same range again changes nothing")
	_, err = st.ClaimBelow(ctx, lease, day10)
	require.NoError(t, err)
	_, err = st.Write(ctx, row(day10.Add(time.Hour)))
	require.NoError(t, err, "a lower claim withdraws the refusal above it")
	_, err = st.Write(ctx, row(day10.Add(-5*24*time.Hour)))
	require.ErrorIs(t, err, hot.ErrArchivedRange)
	_, err = st.ClaimBelow(ctx, lease, time.Time{})
	require.NoError(t, err)
	_, err = st.Write(ctx, row(day10.Add(-5*24*time.Hour)))
	require.NoError(t, err, "a zero claim withdraws the archived range")
	_, err = st.ClaimBelow(ctx, lease, day10.Add(time.Hour))
	require.ErrorContains(t, err, "not a partition boundary")
	lease.Release()
	_, err = st.ClaimBelow(ctx, lease, day11)
	require.ErrorIs(t, err, pglock.ErrLeaseLost, "a claim needs the archiver lease")
}

// The detached partitions are listed by the range of names starting with
// "<table>_" and kept by their pattern: other tables in that range — or just
// outside it — are not partitions of the table.
func TestDetachedPartitionsAreOnlyThePartitionsNames(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	_, err := st.Write(ctx, quarterHours(maloA, obisImport, day10, 4, 20260310000001))
	require.NoError(t, err)
	for _, other := range []string{"readings_versions_backup", "readings_versions_2026_03_09_0000_copy",
		"readings_versions_2026_3_09_0000", "readings_versionsx_2026_03_09_0000", "readings_versions`2026_03_09_0000"} {
		_, err := pool.Exec(ctx, "CREATE TABLE "+meterstore.QuoteIdent(other)+" (x int)")
		require.NoError(t, err, other)
	}
	parts, err := st.Partitions(ctx)
	require.NoError(t, err)
	require.Equal(t, day10, parts[1].From)
	require.NoError(t, st.Detach(ctx, parts[1]))

	det, err := st.DetachedPartitions(ctx)
	require.NoError(t, err)
	require.Equal(t, []hot.Partition{{Name: "readings_versions_2026_03_10_0000", From: day10, To: day10.Add(24 * time.Hour)}}, det)
}
