package main

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
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
