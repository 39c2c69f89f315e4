package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/ingest"
)

// A query whose value column is a DOUBLE (read_csv's sniffer makes one) is
// refused with the fix a query can apply: a cast, or read_csv as text.
func TestQueryFloatRefusalNamesTheSQLFix(t *testing.T) {
	st := start(t, nil)
	q := `SELECT '` + maloA + `' AS malo_id, '` + obisIn + `' AS obis_code, 'STROM' AS sparte,
		TIMESTAMPTZ '2026-03-18 00:00:00+00' AS "from", TIMESTAMPTZ '2026-03-18 00:15:00+00' AS "to",
		0.1::DOUBLE AS value, 'KWH' AS unit, 'MEASURED' AS quality, '20260319000001' AS version, '` + op + `' AS operator`
	rep, err := ingest.Query(context.Background(), st.Store, ingest.Options{}, "INSERT … SELECT", q)
	require.NoError(t, err)
	require.Len(t, rep.Refused, 1, rep.String())
	require.ErrorIs(t, rep.Refused[0], ingest.ErrFloat)
	require.Contains(t, rep.Refused[0].Error(), "in the query: cast it, CAST(… AS DECIMAL(18,6)), or read_csv(…, all_varchar = true)")
}
