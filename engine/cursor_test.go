package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestCursorRetriesOnlyBeforeItHandsOutRows: a statement an archival moves a
// window under is run again while its rows are held back — a result within
// the read-ahead comes whole, at the moved watermark — and once rows were
// handed out, it is not run again and ends with ErrBoundaryMoved.
func TestCursorRetriesOnlyBeforeItHandsOutRows(t *testing.T) {
	ctx := context.Background()
	h := storetest.StartHourly(t, storetest.Options{}, 2)
	all := time.Time{}
	winners := len(h.Oracle.Winners(all, all))
	t.Run("held back", func(t *testing.T) {
		e, hot := h.ArchivingEngine(t)
		before, err := h.Table.Cold.Watermark(ctx)
		require.NoError(t, err)
		c, err := e.Cursor(ctx, winners+1, `SELECT malo_id FROM readings`)
		require.NoError(t, err)
		n := 0
		for c.Next() {
			n++
		}
		require.NoError(t, c.Err())
		require.NoError(t, c.Close())
		require.Equal(t, winners, n)
		require.EqualValues(t, 2, hot.Scans(), "run again after the archival")
		require.Equal(t, before.Add(time.Hour), c.Provenance.Watermark)
	})

	t.Run("handed out", func(t *testing.T) {
		e, hot := h.ArchivingEngine(t)
		c, err := e.Cursor(ctx, 10, `SELECT malo_id FROM readings`)
		require.NoError(t, err)
		n := 0
		for c.Next() {
			n++
		}
		require.ErrorIs(t, c.Err(), engine.ErrBoundaryMoved)
		require.ErrorIs(t, c.Close(), engine.ErrBoundaryMoved)
		require.Greater(t, n, 10, "rows were handed out")
		require.EqualValues(t, 1, hot.Scans(), "not run again")
	})
}
