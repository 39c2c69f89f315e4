package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFindReferences: every reference, in the text's order, wherever it is;
// a CTE of the same name shadows the relation; system tables are collected
// apart; each SELECT knows the references it reads directly.
func TestFindReferences(t *testing.T) {
	e := testSession(t, nil)
	for _, tc := range []struct {
		sql    string
		names  []string
		system int
		levels []int // per SELECT that reads references directly: how many, of how many table references
	}{
		{`SELECT * FROM readings`, []string{"readings"}, 0, []int{1, 1}},
		{`SELECT * FROM readings r JOIN readings_versions v USING (malo_id), range(3)`, []string{"r", "v"}, 0, []int{2, 3}},
		{`SELECT * FROM (SELECT * FROM readings) s WHERE malo_id IN (SELECT malo_id FROM readings_versions x)`, []string{"readings", "x"}, 0, []int{1, 1, 1, 1}},
		{`WITH readings AS (SELECT 1 AS x) SELECT * FROM readings`, nil, 0, nil},
		{`WITH w AS (SELECT * FROM readings_versions) SELECT * FROM w, system.tables`, []string{"readings_versions"}, 1, []int{1, 1}},
		{`SELECT malo_id FROM readings UNION ALL SELECT malo_id FROM main.readings_versions`, []string{"readings", "readings_versions"}, 0, []int{1, 1, 1, 1}},
	} {
		pl, err := planThrough(t, e, tc.sql, "find references")
		require.NoError(t, err, tc.sql)
		var names []string
		for _, r := range pl.refs {
			names = append(names, r.n.Name())
		}
		require.Equal(t, tc.names, names, tc.sql)
		require.Len(t, pl.system, tc.system, tc.sql)
		var levels []int
		for _, lv := range pl.levels {
			levels = append(levels, len(lv.mine), lv.total)
		}
		require.Equal(t, tc.levels, levels, tc.sql)
	}
}

// TestReferencesKnowTheirRelation: readings is the resolved form, readings_versions the raw one.
func TestReferencesKnowTheirRelation(t *testing.T) {
	pl, err := planThrough(t, testSession(t, nil), `SELECT * FROM readings, READINGS_VERSIONS`, "find references")
	require.NoError(t, err)
	require.True(t, pl.refs[0].rel.resolved)
	require.False(t, pl.refs[1].rel.resolved)
	require.Same(t, pl.refs[0].rel.table, pl.refs[1].rel.table)
}
