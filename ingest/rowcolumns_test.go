package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
)

// A row's interval that breaks a rule is refused naming the column that
// holds the fault — from, to or value — not value for all three.
func TestIntervalRefusalNamesTheColumnAtFault(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	cases := []struct{ name, from, to, value, where, rule string }{
		{"from.csv", "2026-03-18T00:00:00.0000007+01:00", "2026-03-18T00:15:00+01:00", "1", "row 1, column from", "sub-microsecond precision"},
		{"to.csv", "2026-03-18T00:00:00+01:00", "2026-03-18T00:15:00.0000007+01:00", "1", "row 1, column to", "sub-microsecond precision"},
		{"reversed.csv", "2026-03-18T00:15:00+01:00", "2026-03-18T00:00:00+01:00", "1", "row 1, column to", "empty or reversed"},
		{"value.csv", "2026-03-18T00:00:00+01:00", "2026-03-18T00:15:00+01:00", "0.1234567", "row 1, column value", "more than 6 decimals"},
	}
	for _, tc := range cases {
		f := writeFile(t, dir, tc.name, header,
			maloA+","+obisIn+",STROM,"+tc.from+","+tc.to+","+tc.value+",KWH,MEASURED,20260319000001,"+op)
		rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, f)
		require.NoError(t, err)
		require.Len(t, rep.Refused, 1, tc.name)
		require.Equal(t, tc.where, rep.Refused[0].Where, tc.name)
		require.ErrorIs(t, rep.Refused[0], metering.ErrInvalid, tc.name)
		require.Contains(t, rep.Refused[0].Error(), tc.rule, tc.name)
	}
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings`))
}
