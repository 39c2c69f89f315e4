package plan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// Each slot is filled exactly where its name was rendered, quoted or not; a
// slot rendered twice or not at all fails the plan instead of running a
// statement the engine did not build.
func TestRelationSlotsFillTheirNames(t *testing.T) {
	s, err := newRelationSlots()
	require.NoError(t, err)
	a := s.slot(&sqltree.BaseTable{TableName: "readings"}, "SELECT 1 AS x")
	b := s.slot(&sqltree.BaseTable{TableName: "readings", Alias: "r"}, "SELECT 2 AS x")
	require.Equal(t, "readings", a.Alias)
	require.Equal(t, "r", b.Alias)
	q, err := s.fill(`SELECT * FROM ` + a.TableName + ` AS readings, "` + b.TableName + `" AS r`)
	require.NoError(t, err)
	require.Equal(t, `SELECT * FROM (SELECT 1 AS x) AS readings, (SELECT 2 AS x) AS r`, q)

	for i := 0; i < 11; i++ {
		s.slot(&sqltree.BaseTable{TableName: "readings"}, "SELECT 3")
	}
	_, err = s.fill(`SELECT * FROM ` + a.TableName + `, ` + a.TableName)
	require.ErrorContains(t, err, "2 times, not once")
	require.NotEqual(t, s.name(1), s.name(10)[:len(s.name(1))], "no name is a prefix of another")
	other, err := newRelationSlots()
	require.NoError(t, err)
	require.NotEqual(t, s.name(0), other.name(0), "a plan's names are its own")
}
