package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/store"
)

// TestRecordedAtOwnedByTheStore: the store's clock (Config.Now) stamps a
// delivery that carries no recorded_at, and the outcome says which clock
// stamped each; a recorded_at ahead of that clock by more than the skew is
// refused, naming the value, the clock's now and the skew — it would hide
// the rows from AsKnownAt(now) until then — while one within the skew, or in
// the past (the caller's word), is taken.
func TestRecordedAtOwnedByTheStore(t *testing.T) {
	now := day0.Add(72 * time.Hour)
	e := open(t, func(s *setup) {
		s.Now = func() time.Time { return now }
		s.RecordedAtSkew = 0 // the default
	}, intervalTable(t, nil))

	future := mk(t, dl{from: day0, value: "1"})
	future.RecordedAt = now.Add(store.DefaultRecordedAtSkew + time.Second)
	_, err := e.st.Append(e.ctx, future)
	var rerr *store.RecordedAtError
	require.ErrorAs(t, err, &rerr)
	require.ErrorIs(t, err, store.ErrRecordedAtFuture)
	require.True(t, rerr.Now.Equal(now))
	require.Equal(t, store.DefaultRecordedAtSkew, rerr.Skew)
	require.ErrorContains(t, err, "recorded_at 2026-03-05T00:05:01Z is 5m1s ahead of the store's clock (2026-03-05T00:00:00Z), more than the allowed skew of 5m0s")
	require.Zero(t, e.scalar(t, `SELECT count(*) FROM readings_versions`), "nothing was written")

	stamped := mk(t, dl{from: day0, value: "1"})
	stamped.RecordedAt = time.Time{}
	within := mk(t, dl{malo: maloB, from: day0, value: "2"})
	within.RecordedAt = now.Add(store.DefaultRecordedAtSkew)
	past := mk(t, dl{from: day0.Add(24 * time.Hour), value: "3"})
	past.RecordedAt = day0.Add(30 * time.Hour)
	out, err := e.st.Append(e.ctx, stamped, within, past)
	require.NoError(t, err)
	require.Equal(t, []store.Stamp{
		{RecordedAt: now, Clock: store.StoreClock},
		{RecordedAt: now.Add(store.DefaultRecordedAtSkew), Clock: store.CallerClock},
		{RecordedAt: day0.Add(30 * time.Hour), Clock: store.CallerClock},
	}, out.Stamps)
	require.EqualValues(t, 4, e.scalar(t, `SELECT count(*) FROM readings_versions WHERE recorded_at = '2026-03-05 00:00:00+00'`),
		"the store's clock stamped the delivery that carried none")
}

// TestHistoryRecordedAtOwnedByTheStore: a history load (Backfill,
// BackfillFrom — what msql import sends below PostgreSQL's window) refuses a
// recorded_at beyond the store's clock and the skew as Append does: committed,
// its rows would be missing from AsKnownAt(now) until that time comes.
func TestHistoryRecordedAtOwnedByTheStore(t *testing.T) {
	now := day0.Add(72 * time.Hour)
	loads := map[string]func(tbl *store.Table, e *env, s meterstore.StoredSeries) error{
		"Backfill": func(tbl *store.Table, e *env, s meterstore.StoredSeries) error {
			_, _, err := tbl.Backfill(e.ctx, day0.Add(24*time.Hour), s)
			return err
		},
		"BackfillFrom": func(tbl *store.Table, e *env, s meterstore.StoredSeries) error {
			_, _, err := tbl.BackfillFrom(e.ctx, day0.Add(24*time.Hour), &seriesPages{{s}})
			return err
		},
	}
	for name, load := range loads {
		t.Run(name, func(t *testing.T) {
			e := open(t, func(s *setup) {
				s.Now = func() time.Time { return now }
				s.RecordedAtSkew = 0 // the default
			}, intervalTable(t, nil))
			tbl, _ := e.st.Table("readings_versions")
			future := mk(t, dl{from: day0, value: "1"})
			future.RecordedAt = now.Add(store.DefaultRecordedAtSkew + time.Second)
			err := load(tbl, e, future)
			var rerr *store.RecordedAtError
			require.ErrorAs(t, err, &rerr)
			require.ErrorIs(t, err, store.ErrRecordedAtFuture)
			require.Zero(t, e.scalar(t, `SELECT count(*) FROM readings_versions`), "nothing was written")

			past := mk(t, dl{from: day0, value: "1"})
			past.RecordedAt = day0.Add(30 * time.Hour)
			require.NoError(t, load(tbl, e, past), "a recorded_at in the past is the caller's word")
			require.EqualValues(t, 4, e.scalar(t, `SELECT count(*) FROM readings_versions`))
		})
	}
}
