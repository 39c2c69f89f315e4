package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
)

func TestVerifyCommand(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append([]string{"verify"}, dep...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "readings_versions: healthy, watermark 2025-")

	// A partition detached by hand looks like an interrupted archival: reported.
	// (Rows left below the watermark — exit 3 — are not provoked here yet.)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dep[1])
	require.NoError(t, err)
	defer conn.Close(ctx)
	var part string
	require.NoError(t, conn.QueryRow(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'readings_versions'
		AND c.relname <> 'readings_versions$archived' ORDER BY c.relname LIMIT 1`).Scan(&part))
	_, err = conn.Exec(ctx, "ALTER TABLE readings_versions DETACH PARTITION "+part)
	require.NoError(t, err)
	r = msql(t, "", append([]string{"verify"}, dep...)...)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "warning: partitions detached and not dropped")
	require.Contains(t, r.stdout, part)
}

// msql verify exits 3 when a cold interval reaching above the watermark is
// contradicted by a row PostgreSQL holds — what a file committed out of band
// leaves (here a commit no rule checks: CommitWindow keeping the watermark,
// of an interval from an hour below it over a hot row, at that row's
// version) — and names the reading, both intervals and what to do.
func TestVerifyExitsThreeOnAContradictionAcrossTiers(t *testing.T) {
	dep, tb := tinyDemoTable(t)
	ctx := context.Background()
	w, err := tb.Cold().Watermark(ctx)
	require.NoError(t, err)
	var above meterstore.Row
	errStop := errors.New("one row")
	err = tb.Hot().Scan(ctx, hot.ScanRequest{From: w, PageRows: 1}, func(rs []meterstore.Row) error { above = rs[0]; return errStop })
	require.ErrorIs(t, err, errStop, "a hot row above the watermark")
	straddler := above
	straddler.From = w.Add(-time.Hour)
	_, err = tb.Cold().CommitWindow(ctx, &catalog.SliceSource{Rows: []meterstore.Row{straddler}}, w)
	require.NoError(t, err)

	r := msql(t, "", append([]string{"verify"}, dep...)...)
	require.Equal(t, 3, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, tb.Config().Name()+": an interval of the cold tier contradicts the hot tier's rows")
	for _, want := range []string{above.MaloID, "no_overlap across tiers", straddler.From.Format(time.RFC3339), above.From.Format(time.RFC3339)} {
		require.Contains(t, r.stdout, want)
	}
	require.Contains(t, r.stderr, "an interval of the cold tier contradicts the hot tier's rows")
	require.Contains(t, r.stderr, "Try: no write of the store leaves such a pair")
	require.Contains(t, r.stderr, "remove it with the tool that added it")
}
