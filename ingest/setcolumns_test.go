package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
)

// --set gives every row the same value, so it takes identity and attribute
// columns (a tenant, the operator, a version), never a row's own quantity or
// interval: --set value=5 over a file without values stored 5 in every row.
func TestSetRefusesARowsOwnColumns(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	f := writeFile(t, t.TempDir(), "novalue.csv",
		"malo_id,obis_code,sparte,from,to,unit,quality,version,operator",
		maloA+","+obisIn+",STROM,2026-03-18T00:00:00+01:00,2026-03-18T00:15:00+01:00,KWH,MEASURED,20260319000001,"+op)
	for _, col := range []string{"value", "from", "to"} {
		_, err := ingest.Files(ctx, st.Store, ingest.Options{Set: map[string]string{col: "5"}}, f)
		require.ErrorIs(t, err, ingest.ErrOptions, col)
		require.Contains(t, err.Error(), "--set "+col+": each row has its own", col)
	}
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings`))
}
