package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// Compaction holds its inputs to the rules the write paths enforce: an hour
// and a quarter-hour inside it at one version, committed by a writer that did
// not check them, are refused instead of merged into a file marked clean.
func TestCompactionRefusesOverlappingInputs(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	at := time.Date(2025, 1, 14, 0, 0, 0, 0, time.UTC)
	const v = 20250114000001
	q := mkRow(malos[0], "tenant01", at.Add(15*time.Minute), "1", v, opA)
	hour := mkRow(malos[0], "tenant01", at, "4", v, opA)
	end := at.Add(time.Hour)
	hour.To, hour.Resolution = &end, strp("PT1H")
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{hour}}, at.Add(24*time.Hour))
	require.NoError(t, err)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{q}}, time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)

	res, err := tb.Compact(ctx, CompactOptions{})
	require.ErrorIs(t, err, meterstore.ErrOverlap, "compacted %+v", res)
	require.Len(t, readAll(t, tb), 2, "nothing rewritten")
}

// A unit the row's Sparte cannot have — electricity in m³ — is refused by
// every cold write path: a late correction, a history load, and compaction of
// files a writer that did not check it committed (here CommitWindow, which
// trusts PostgreSQL's constraint for the rows archival streams).
func TestColdWritesRefuseAUnitItsSparteCannotHave(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	at := time.Date(2025, 1, 14, 0, 0, 0, 0, time.UTC)
	const v = 20250114000001
	kwh := mkRow(malos[0], "tenant01", at, "4", v, opA)
	m3 := mkRow(malos[1], "tenant01", at, "7", v, opA)
	m3.Unit = "M3"
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{kwh, m3}}, at.Add(24*time.Hour))
	require.NoError(t, err)
	_, err = tb.CommitWindow(ctx, &SliceSource{}, time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)

	late := m3
	late.Version++
	_, err = tb.AppendCold(ctx, []meterstore.Row{late})
	require.ErrorIs(t, err, meterstore.ErrUnitPair)
	require.ErrorContains(t, err, "unit M3 is not allowed for sparte STROM; use KWH")

	history := mkRow(malos[1], "tenant01", time.Date(2025, 2, 3, 0, 0, 0, 0, time.UTC), "7", 20250203000001, opA)
	history.Unit = "M3"
	f, err := tb.Fence(ctx, nil)
	require.NoError(t, err)
	_, _, err = tb.CommitHistory(ctx, f, []meterstore.Row{history}, time.Date(2025, 2, 4, 0, 0, 0, 0, time.UTC))
	require.ErrorIs(t, err, meterstore.ErrUnitPair)

	res, err := tb.Compact(ctx, CompactOptions{})
	require.ErrorIs(t, err, meterstore.ErrUnitPair, "compacted %+v", res)
	require.ErrorContains(t, err, "malo "+malos[1])
	require.ErrorContains(t, err, "unit M3 is not allowed for sparte STROM; use KWH")
	require.Len(t, readAll(t, tb), 2, "nothing rewritten")
}

// Compaction checks a month's inputs against the intervals of earlier months
// that reach into it, as the write paths check a write against every stored
// interval overlapping it: a day value starting on 31 January and a
// quarter-hour inside it on 1 February, at one version, committed by a
// writer that did not check them, lie in two partitions and are refused all
// the same.
func TestCompactionRefusesAnInputOverlappingAnEarlierMonthsInterval(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	feb := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	const v = 20250131000001
	day := mkRow(malos[0], "tenant01", feb.Add(-time.Hour), "24", v, opA)
	end := feb.Add(23 * time.Hour)
	day.To, day.Resolution = &end, strp("P1D")
	inside := mkRow(malos[0], "tenant01", feb.Add(6*time.Hour), "1", v, opA)
	later := mkRow(malos[0], "tenant01", feb.Add(25*time.Hour), "1", v, opA)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{day}}, feb)
	require.NoError(t, err)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{inside}}, feb.Add(24*time.Hour))
	require.NoError(t, err)
	_, err = tb.CommitWindow(ctx, &SliceSource{Rows: []meterstore.Row{later}}, time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)

	res, err := tb.Compact(ctx, CompactOptions{Month: feb})
	require.ErrorIs(t, err, meterstore.ErrOverlap, "compacted %+v", res)
	t.Logf("refused: %v", err)
	require.Len(t, readAll(t, tb), 3, "nothing rewritten")
}
