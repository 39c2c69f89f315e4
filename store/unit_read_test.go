package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTypedReadRechecksSparteUnit: a stored row whose unit does not belong to
// its Sparte (written around the store, which PostgreSQL's unit list alone
// does not catch: M3 is a unit) is refused by the typed read, not returned as
// electricity in cubic metres.
func TestTypedReadRechecksSparteUnit(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	_, err := e.st.Append(e.ctx, mk(t, dl{from: day0.Add(72 * 3600e9), value: "1"}))
	require.NoError(t, err)
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer tx.Rollback(e.ctx) //nolint:errcheck
	// Around the append-only trigger, as a hand repair or a foreign writer would.
	_, err = tx.Exec(e.ctx, `SET LOCAL session_replication_role = replica`)
	require.NoError(t, err)
	_, err = tx.Exec(e.ctx, `UPDATE readings_versions SET unit = 'M3'`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(e.ctx))
	_, err = e.st.Series(maloA).Collect(e.ctx)
	require.Error(t, err, "STROM in M3")
	require.Contains(t, err.Error(), "sparte STROM")
}
