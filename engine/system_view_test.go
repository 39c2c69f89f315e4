package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSystemViewUnsplit: a scoped database holds none of a table's partitions
// when one of them is not split by the scoped column (it holds every value's
// rows), and of a split table exactly the scope's, whatever the segment order.
func TestSystemViewUnsplit(t *testing.T) {
	v := &systemView{tables: map[string]bool{"a": true, "b": true}, scope: map[string]string{"tenant": "t1"}}
	all := map[string][]systemRow{
		"partitions": {
			{"a", "tenant=t1/from_month=2025-10"},
			{"a", "from_month=2025-11/tenant=t1"},
			{"a", "tenant=t10/from_month=2025-10"},
			{"a", "tenant=t2/from_month=2025-10"},
			{"b", "tenant=t1/from_month=2025-10"},
			{"b", "from_month=2025-10"},
			{"c", "tenant=t1/from_month=2025-10"},
		},
		"tables": {{"a"}, {"b"}},
		"config": {{"a"}, {"c"}},
	}
	got := v.visible(all)
	require.Equal(t, []systemRow{{"a", "tenant=t1/from_month=2025-10"}, {"a", "from_month=2025-11/tenant=t1"}}, got["partitions"])
	require.Empty(t, got["tables"])
	require.Equal(t, []systemRow{{"a"}}, got["config"])
	require.Equal(t, all, (*systemView)(nil).visible(all), "the engine's own database holds every row")
}
