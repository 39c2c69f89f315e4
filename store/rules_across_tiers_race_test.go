package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/store"
)

// TestHotRefusesOverlapWithAStraddlerBeingArchived: the day value's window is
// claimed and read out by an archival whose commit is not yet made — the row
// is in neither PostgreSQL's attached partitions nor Iceberg — when a
// quarter-hour inside it, above the watermark to be, is written. The hot
// write reads the detached window too and refuses it.
func TestHotRefusesOverlapWithAStraddlerBeingArchived(t *testing.T) {
	const v = 20260302000001
	at := day0.Add(30 * time.Hour)
	var tbl *store.Table
	var ran bool
	var raced error
	var out store.AppendOutcome
	e := open(t, func(c *setup) {
		c.hooks.Archive = func(s archive.Step) error {
			if s != archive.AfterWrite || ran {
				return nil
			}
			ran = true
			out, raced = tbl.Append(context.Background(), spans(t, imp, op1, v, span{at, at.Add(15 * time.Minute), "1"}))
			return nil
		}
	}, intervalTable(t, nil))
	tbl, _ = e.st.Table("readings_versions")
	_, err := tbl.Append(e.ctx, spans(t, imp, op1, v, span{day0.Add(23 * time.Hour), day0.Add(47 * time.Hour), "24"}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	require.True(t, ran, "the archival reached its commit")
	require.ErrorIs(t, raced, meterstore.ErrOverlap, "outcome %v, hot rows %d", effects(out), out.HotRows)
	require.Equal(t, "24", dec(t, e.scalar(t, `SELECT sum(value) FROM readings`)).String())
}
