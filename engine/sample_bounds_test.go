package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit"
)

// TestSampleBeforeTheWhere: DuckDB samples a relation (TABLESAMPLE on it, or
// USING SAMPLE on its SELECT) before it applies the WHERE, so a sample of k
// rows of readings holds all k readings of a narrow range only by chance —
// one draw in C(N, k), N the readings. A planner that narrows the relation
// in the reference's place by the WHERE's "from" bounds or merge-key
// equalities samples the range instead, and answers k every time: a
// different number, with no error. Ranges in the cold and in the hot tier.
func TestSampleBeforeTheWhere(t *testing.T) {
	w := testkit.NewWorkload(0x5a3)
	w.MaLos, w.Days = 3, 5
	a := newArchivedStore(t, w)
	winners := a.oracle.Winners(time.Time{}, time.Time{})
	malo := winners[0].MaloID
	last := winners[0].From
	for _, r := range winners {
		if r.From.After(last) {
			last = r.From
		}
	}
	for _, rng := range [][2]time.Time{{a.cut.Add(-time.Hour), a.cut}, {last.Add(-time.Hour), last.Add(time.Hour)}} {
		lo, hi := rng[0], rng[1]
		var k, ofMalo int
		for _, r := range winners {
			if !r.From.Before(lo) && r.From.Before(hi) {
				k++
				if r.MaloID == malo {
					ofMalo++
				}
			}
		}
		require.GreaterOrEqual(t, ofMalo, 3, "enough readings in [%s, %s) that drawing them all by chance cannot happen", lo, hi)
		for _, tc := range []struct {
			q    string
			args []any
			k    int
		}{
			{fmt.Sprintf(`SELECT count(*) FROM readings TABLESAMPLE %d ROWS WHERE "from" >= $1 AND "from" < $2`, k), []any{lo, hi}, k},
			{fmt.Sprintf(`SELECT count(*) FROM readings WHERE "from" >= $1 AND "from" < $2 USING SAMPLE %d ROWS`, k), []any{lo, hi}, k},
			{fmt.Sprintf(`SELECT count(*) FROM readings_versions TABLESAMPLE %d ROWS WHERE "from" BETWEEN $1 AND $2`, k), []any{lo, hi.Add(-time.Microsecond)}, -1},
			{fmt.Sprintf(`SELECT count(*) FROM readings TABLESAMPLE %d ROWS WHERE malo_id = $3 AND "from" >= $1 AND "from" < $2`, ofMalo), []any{lo, hi, malo}, ofMalo},
		} {
			res, err := a.s.Engine.Query(context.Background(), tc.q, tc.args...)
			require.NoError(t, err, tc.q)
			got := res.Rows[0][0].(int64)
			if tc.k < 0 { // every version in the range: at least the winners
				assert.Less(t, got, int64(k), "%s %v: the sample is of every version, not of the range's", tc.q, tc.args)
				continue
			}
			assert.Less(t, got, int64(tc.k), "%s %v: the sample is of every reading, not of the range's", tc.q, tc.args)
		}
	}
}
