package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitAtTheWatermark: cold covers [lo, min(hi, W)), hot [max(lo, W), hi);
// each half only where the range and the mode reach; a partition detached at
// or above W is scanned beside the parent.
func TestSplitAtTheWatermark(t *testing.T) {
	w := ts("2025-03-01T00:00:00Z")
	e := testSession(t, &fixedCold{dir: t.TempDir(), snapshot: 7, watermark: w})
	hist, err := e.InReadMode(Historical)
	require.NoError(t, err)
	oper, err := e.InReadMode(Operational)
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		e         *session
		where     string
		cold, hot string // the halves' ranges, "" = not read
	}{
		{"spanning", e, `"from" >= '2025-02-01 00:00:00+00'`, "[2025-02-01T00:00:00Z, 2025-03-01T00:00:00Z)", "[2025-03-01T00:00:00Z, +∞)"},
		{"cold only", e, `"from" < '2025-02-01 00:00:00+00'`, "[-∞, 2025-02-01T00:00:00Z)", ""},
		{"hot only", e, `"from" >= '2025-03-01 00:00:00+00'`, "", "[2025-03-01T00:00:00Z, +∞)"},
		{"historical", hist, `true`, "[-∞, 2025-03-01T00:00:00Z)", ""},
		{"operational", oper, `true`, "", "[2025-03-01T00:00:00Z, +∞)"},
	} {
		pl, err := planThrough(t, tc.e, `SELECT * FROM readings WHERE `+tc.where, "split tiers")
		require.NoError(t, err, tc.name)
		ref := pl.refs[0]
		if tc.cold == "" {
			require.Nil(t, ref.cold, tc.name)
		} else {
			require.Equal(t, tc.cold, ref.cold.rng.String(), tc.name)
		}
		if tc.hot == "" {
			require.Nil(t, ref.hot, tc.name)
		} else {
			require.Equal(t, tc.hot, ref.hot.rng.String(), tc.name)
		}
	}

	hot := e.tables[0].Hot.(*fixedHot)
	hot.detached = []DetachedPartition{{Name: "p_old", From: ts("2025-02-28T00:00:00Z")}, {Name: "p_new", From: w}}
	scoped, err := e.Scoped("tenant", "t1")
	require.NoError(t, err)
	pl, err := planThrough(t, scoped, `SELECT * FROM readings WHERE tenant = 't2'`, "split tiers")
	require.NoError(t, err)
	ref := pl.refs[0]
	require.Len(t, ref.hot.scans, 2, "the parent and the partition above W")
	require.Equal(t, "p_new", ref.hot.scans[1].Table)
	require.Equal(t, map[string]string{"tenant": "t1"}, ref.hot.scans[0].Eq, "the scope wins")
	require.Contains(t, ref.cold.where, `"tenant" = 't1'`)
}
