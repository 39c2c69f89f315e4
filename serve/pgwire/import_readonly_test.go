package pgwire_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// The local shell imports a query's rows with INSERT INTO readings_versions
// SELECT … FROM read_csv(…); pgwire refuses the same statement, naming the
// rule and where imports go, and stores nothing.
func TestPGWireRefusesInsertFromFile(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	users := f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"})
	_, addr := f.StartPG(t, users)
	csv := filepath.Join(t.TempDir(), "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("malo_id,obis_code,sparte,from,to,value,unit,quality,version,operator,tenant\n"+
		"41373559241,1-0:1.29.0,STROM,2025-12-01T00:00:00+01:00,2025-12-01T00:15:00+01:00,1,KWH,MEASURED,20260101000001,9910125000002,tenant01\n"), 0o644))
	before, err := f.Store.Engine.Query(ctx, `SELECT count(*) FROM readings_versions`)
	require.NoError(t, err)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		c := servetest.PGConnect(t, addr, "admin", "s3cret", mode, nil)
		for _, q := range []string{
			`INSERT INTO readings_versions SELECT * FROM read_csv('` + csv + `', all_varchar = true)`,
			`INSERT INTO readings_versions BY NAME SELECT * FROM read_parquet('` + csv + `')`,
		} {
			_, err := c.Exec(ctx, q)
			require.Error(t, err, q)
			var pe *pgconn.PgError
			require.True(t, errors.As(err, &pe), "%s: %v", q, err)
			require.Equal(t, "42501", pe.Code, "%s: %v", q, err)
			require.Contains(t, pe.Message, "read-only: ", q)
			require.Contains(t, pe.Message, "INSERT changes data", q)
			require.Contains(t, pe.Hint, "msql import", q)
		}
	}
	after, err := f.Store.Engine.Query(ctx, `SELECT count(*) FROM readings_versions`)
	require.NoError(t, err)
	require.Equal(t, before.Rows, after.Rows)
}
