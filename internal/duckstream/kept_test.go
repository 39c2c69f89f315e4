package duckstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// closer counts its closes.
type closer struct{ closed *int }

func (c closer) Close() error { *c.closed++; return nil }

// Values given back before the cut-off and not taken since are closed and
// no longer kept; those given back later, or taken and given back again
// since, stay — as many as there were, for their keys.
func TestKeptClosesWhatIdledSinceTheCutOff(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := NewKept[string, closer](16)
	k.now = func() time.Time { return clock }
	closed := 0
	giveBackAt := func(minute int, key string) {
		clock = time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC)
		k.GiveBack(key, closer{&closed})
	}
	// A burst of three runs of "day" at once left three kept.
	giveBackAt(0, "day")
	giveBackAt(0, "day")
	giveBackAt(1, "month")
	giveBackAt(1, "day")
	// One "month" is taken and given back later.
	m, ok := k.Take("month")
	require.True(t, ok)
	clock = time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	k.GiveBack("month", m)
	giveBackAt(6, "day")
	require.Equal(t, 5, k.Len())

	require.Zero(t, k.CloseIdle(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), "nothing was given back before minute 0")
	require.Equal(t, 3, k.CloseIdle(time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC)))
	require.Equal(t, 3, closed)
	require.Equal(t, 2, k.Len())
	_, ok = k.Take("month")
	require.True(t, ok, "the month given back at minute 5 is kept")
	_, ok = k.Take("day")
	require.True(t, ok, "the day given back at minute 6 is kept")
	_, ok = k.Take("day")
	require.False(t, ok, "the days given back before minute 2 are closed")
}
