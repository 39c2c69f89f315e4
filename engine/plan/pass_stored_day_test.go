package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStoredBalancingDayRewrite(t *testing.T) {
	e := testSession(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		sql       string
		rewritten bool
	}{
		{`SELECT meter_balancing_day("from", sparte) AS d, sum(value) FROM readings GROUP BY 1`, true},
		{`SELECT meter_balancing_day(r."from", r.sparte), sum(value) FROM readings r GROUP BY ALL`, true},
		{`SELECT meter_balancing_day(r."from", v.sparte) FROM readings r JOIN readings_versions v USING (malo_id)`, false},
		{`SELECT meter_balancing_day("from", sparte) FROM readings r JOIN readings_versions v USING (malo_id)`, false},
		{`SELECT meter_balancing_day("to", sparte) FROM readings`, false},
		{`SELECT meter_balancing_month("from", sparte) AS m, sum(value) FROM readings GROUP BY 1`, true},
		{`SELECT meter_balancing_month(r."from", v.sparte) FROM readings r JOIN readings_versions v USING (malo_id)`, false},
	} {
		pl, err := planThrough(t, e, tc.sql, "stored balancing day")
		require.NoError(t, err)
		out, err := deserialize(ctx, pl.conn, pl.root)
		require.NoError(t, err)
		rewritten := strings.Contains(out, "balancing_day AS") || strings.Contains(out, "CAST(date_trunc('month', balancing_day) AS DATE) AS")
		require.Equal(t, tc.rewritten, rewritten, "%s → %s", tc.sql, out)
	}
}

func TestStoredBalancingDayKeepsTheColumnName(t *testing.T) {
	ctx := context.Background()
	pl, err := planThrough(t, testSession(t, nil), `SELECT meter_balancing_day("from", sparte) AS day, meter_balancing_day("from", sparte) FROM readings`, "stored balancing day")
	require.NoError(t, err)
	out, err := deserialize(ctx, pl.conn, pl.root)
	require.NoError(t, err)
	require.Contains(t, out, `balancing_day AS "day"`)
	require.Contains(t, out, `balancing_day AS "meter_balancing_day(""from"", sparte)"`)
}
