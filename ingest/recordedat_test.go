package ingest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// A row whose recorded_at lies ahead of the store's clock beyond the skew
// refuses its batch, naming the row and the column, as any bad row does —
// and the dry run says so. The store refused it only when writing, which
// stopped the whole import: no batch of any file went in, exit 1, while the
// dry run had said every row would go in.
func TestFutureRecordedAtRefusesItsBatchOnly(t *testing.T) {
	ctx := context.Background()
	st := storetest.Start(t, storetest.Options{Now: now, RecordedAtSkew: store.DefaultRecordedAtSkew},
		meterstore.TableSpec{Name: "readings_versions"}.MustBuild())
	dir := t.TempDir()
	row := func(malo, obis, recordedAt string) string {
		return malo + "," + obis + ",STROM,2026-03-18T00:00:00+01:00,2026-03-18T00:15:00+01:00,1.5,KWH,MEASURED,20260319000001," + op + "," + recordedAt
	}
	ahead := now.Add(store.DefaultRecordedAtSkew + time.Second).Format(time.RFC3339)
	f := writeFile(t, dir, "stamped.csv", header+",recorded_at",
		row(maloA, obisIn, ahead),
		row(maloB, obisIn, "2026-03-19T00:00:00Z"))
	g := writeFile(t, dir, "other.csv", header+",recorded_at",
		row(maloA, "1-0:2.29.0", now.Add(store.DefaultRecordedAtSkew).Format(time.RFC3339)))

	for _, dry := range []bool{true, false} {
		rep, err := ingest.Files(ctx, st.Store, ingest.Options{DryRun: dry}, f, g)
		require.NoError(t, err, "dry run %v", dry)
		require.Len(t, rep.Refused, 1, "dry run %v: %s", dry, rep.String())
		r := rep.Refused[0]
		require.Equal(t, filepath.Join(dir, "stamped.csv"), r.File)
		require.Equal(t, "row 1, column recorded_at", r.Where)
		require.ErrorIs(t, r, store.ErrRecordedAtFuture)
		require.Contains(t, r.Error(), "more than the allowed skew of 5m0s")
		require.Equal(t, 2, rep.Rows, "dry run %v", dry)
	}
	require.EqualValues(t, 2, scalar(t, st, `SELECT count(*) FROM readings`))
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1 AND obis_code = $2`, maloA, obisIn))
}
