package metering_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
)

// Berlin wall clocks: an ordinary one is one instant; 02:30 on the last
// Sunday of March is skipped, on the last Sunday of October shown twice
// (first at +02, then at +01). The instants were worked out by hand.
func TestInZone(t *testing.T) {
	wall := func(s string) time.Time {
		w, err := time.Parse("2006-01-02 15:04", s)
		require.NoError(t, err)
		return w
	}
	got, err := metering.InZone(wall("2016-01-12 13:47"), metering.Berlin())
	require.NoError(t, err)
	require.Equal(t, time.Date(2016, 1, 12, 12, 47, 0, 0, time.UTC), got)
	got, err = metering.InZone(wall("2026-07-01 00:00"), metering.Berlin())
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 6, 30, 22, 0, 0, 0, time.UTC), got)

	_, err = metering.InZone(wall("2026-03-29 02:30"), metering.Berlin())
	var we *metering.WallClockError
	require.True(t, errors.As(err, &we), "%v", err)
	require.ErrorIs(t, err, metering.ErrInvalid)
	require.True(t, we.First.IsZero())
	require.EqualError(t, err, "2026-03-29 02:30:00 does not exist in Europe/Berlin (the clocks skip it)")

	_, err = metering.InZone(wall("2026-10-25 02:30"), metering.Berlin())
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), we.First)
	require.Equal(t, time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), we.Second)
	require.EqualError(t, err, "2026-10-25 02:30:00 occurs twice in Europe/Berlin (the clocks go back): 2026-10-25T02:30:00+02:00 or 2026-10-25T02:30:00+01:00")
}
