package pglocal_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/internal/pglocal"
)

func TestNewStartsAClusterWithTheDatabase(t *testing.T) {
	ctx := context.Background()
	srv, err := pglocal.New(ctx, filepath.Join(t.TempDir(), "pg"), pglocal.Throwaway, "meter-store")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Stop()) })

	conn, err := pgx.Connect(ctx, srv.DSN("meter-store"))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var db, fsync string
	require.NoError(t, conn.QueryRow(ctx, "SELECT current_database(), current_setting('fsync')").Scan(&db, &fsync))
	require.Equal(t, "meter-store", db)
	require.Equal(t, "off", fsync, "a throwaway cluster runs without fsync")

	_, err = pglocal.New(ctx, srv.DataDir, pglocal.Throwaway, "again")
	require.Error(t, err, "a directory holding a cluster is not initialised twice")
}
