package catalog

import (
	"context"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

func TestExpireSnapshots(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, w := archivedTable(t, e)
	for i := 1; i <= 3; i++ {
		_, err := tb.CommitWindow(ctx, &SliceSource{}, w.Add(time.Duration(i)*24*time.Hour))
		require.NoError(t, err)
	}
	_, err := tb.ExpireSnapshots(ctx, 24*time.Hour, 2, false)
	require.ErrorIs(t, err, ErrRetentionTooShort)
	n, err := tb.ExpireSnapshots(ctx, DefaultRetention, DefaultMinSnapshots, false)
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = tb.ExpireSnapshots(ctx, 0, 2, true)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	got, err := tb.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(w.Add(72*time.Hour)))
	require.Len(t, readAll(t, tb), 4*96)
}

func TestCheckSchema(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
	chk, err := tb.CheckSchema(e.cfg)
	require.NoError(t, err)
	require.Empty(t, chk.Changes)
	require.NoError(t, chk.Err())

	spec := e.cfg.Spec()
	spec.Columns = append(spec.Columns, meterstore.Column{Name: "note", Nullable: true})
	additive, err := spec.Build()
	require.NoError(t, err)
	chk, err = tb.CheckSchema(additive)
	require.NoError(t, err)
	require.True(t, chk.Safe())
	require.Len(t, chk.Changes, 1)

	spec = e.cfg.Spec()
	spec.Columns = append(spec.Columns, meterstore.Column{Name: "region", Kind: meterstore.Identity})
	spec.Columns[1].Nullable = false
	narrowing, err := spec.Build()
	require.NoError(t, err)
	chk, err = tb.CheckSchema(narrowing)
	require.NoError(t, err)
	require.False(t, chk.Safe())
	require.ErrorIs(t, chk.Err(), ErrUnsafeSchema)
	kinds := map[string]bool{}
	for _, c := range chk.Unsafe() {
		kinds[c.Kind] = true
	}
	require.True(t, kinds["required added"], chk.Err())
	require.True(t, kinds["new identity column"], chk.Err())
	t.Log(chk.Err())

	ok, why := promotable(IcebergType(meterstore.TypeDecimal18_6), IcebergType(meterstore.TypeDecimal20_0))
	require.False(t, ok, why)
}

func TestPurgeTable(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, _ := archivedTable(t, e)
	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.NoError(t, e.cat.PurgeTable(ctx, e.cfg))
	_, err = e.cat.Table(ctx, e.cfg)
	require.ErrorIs(t, err, ErrNoSuchTable)
	for _, f := range files {
		require.False(t, s3test.Exists(t, f.Path), f.Path)
	}
	// Recreate after purge works.
	_, err = e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)
}
