package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
)

// A row whose sparte contradicts its OBIS code's medium (value group A: 1
// electricity, 7 gas) is refused, naming both: the sparte decides the
// balancing day and month, so a gas channel stored as STROM would sum its
// 00:00–06:00 hours into the wrong gas day and version scope. The usual way
// there is --set sparte=STROM over an export that also holds gas channels.
// The file's consistent batch goes in.
func TestSparteContradictingTheObisMediumIsRefused(t *testing.T) {
	ctx := context.Background()
	st := start(t, nil)
	f := writeFile(t, t.TempDir(), "mixed.csv",
		"malo_id,obis_code,from,to,value,unit,quality,version,operator",
		maloA+",1-0:1.29.0,2026-03-18T05:00:00+01:00,2026-03-18T05:15:00+01:00,1.5,KWH,MEASURED,20260319000001,"+op,
		maloB+",7-0:33.29.0,2026-03-18T05:00:00+01:00,2026-03-18T05:15:00+01:00,2.5,KWH,MEASURED,20260319000001,"+op)

	rep, err := ingest.Files(ctx, st.Store, ingest.Options{Set: map[string]string{"sparte": "STROM"}}, f)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	r := rep.Refused[0]
	require.ErrorIs(t, r, metering.ErrInvalid)
	require.Equal(t, "row 2, column sparte (--set)", r.Where)
	require.Contains(t, r.Error(), `obis_code 7-0:33.29.0 measures gas (value group A = 7), sparte is STROM`)
	require.Equal(t, 1, rep.Inserted)
	require.EqualValues(t, 0, scalar(t, st, `SELECT count(*) FROM readings WHERE malo_id = $1`, maloB))

	rep, err = ingest.Files(ctx, st.Store, ingest.Options{Set: map[string]string{"sparte": "GAS"}}, f)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	require.Equal(t, "row 1, column sparte (--set)", rep.Refused[0].Where)
	require.Contains(t, rep.Refused[0].Error(), `obis_code 1-0:1.29.0 measures electricity (value group A = 1), sparte is GAS`)
	require.Equal(t, 1, rep.Inserted)
	day := scalar(t, st, `SELECT balancing_day FROM readings WHERE malo_id = $1`, maloB)
	require.Equal(t, "2026-03-17", day.(time.Time).Format("2006-01-02"),
		"05:00 in Berlin belongs to the gas day that began the day before at 06:00")
}
