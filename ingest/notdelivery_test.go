package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
)

// A file in a delivery folder that is no delivery (a licence, a README) is
// refused as such, not with a --map for its first line; the real delivery
// beside it goes in.
func TestFileThatIsNoDeliveryRefusedAsSuch(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	dir := t.TempDir()
	writeFile(t, dir, "LICENSE", "MIT License", "", "Copyright (c) 2020 someone")
	writeFile(t, dir, "good.csv", header,
		maloA+","+obisIn+",STROM,2026-03-18T01:00:00+01:00,2026-03-18T01:15:00+01:00,1.5,KWH,MEASURED,20260319000001,"+op)
	rep, err := ingest.Files(ctx, st.Store, ingest.Options{}, dir)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	msg := rep.Refused[0].Error()
	require.Contains(t, msg, `LICENSE: not a delivery: no column of its header ("MIT License") is a column of table`)
	require.Contains(t, msg, "malo_id")
	require.Contains(t, msg, "an MSCONS interchange starts with UNA or UNB")
	require.NotContains(t, msg, "--map")
	require.Equal(t, 1, rep.Inserted)
}
