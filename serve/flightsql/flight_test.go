package flightsql_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit/storetest"
)

func TestFlightSQL(t *testing.T) {
	f := servetest.New(t)
	users := f.Users(t,
		settings.UserSettings{Name: "admin", Password: "s3cret"},
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"},
	)
	addr := f.StartFlight(t, users)
	cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	bg := context.Background()
	ctx, err := cl.Client.AuthenticateBasicToken(bg, "admin", "s3cret")
	require.NoError(t, err)
	all := time.Time{}

	t.Run("unauthenticated", func(t *testing.T) {
		_, err := cl.Execute(bg, `SELECT 1`)
		require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
		_, err = cl.Client.AuthenticateBasicToken(bg, "admin", "wrong")
		require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	})

	t.Run("statement with provenance", func(t *testing.T) {
		info, err := cl.Execute(ctx, `SELECT count(*) AS n, sum(value) AS s FROM readings`)
		require.NoError(t, err)
		schema, rows, _ := servetest.Fetch(t, ctx, cl, info)
		require.Len(t, rows, 1)
		require.EqualValues(t, f.Oracle.RowCount(all, all), rows[0][0])
		md := schema.Metadata()
		wm, ok := md.GetValue("meterstore.watermark")
		require.True(t, ok, "%v", md)
		ts, err := time.Parse(time.RFC3339Nano, wm)
		require.NoError(t, err)
		require.True(t, ts.Equal(f.Cut))
		tiers, _ := md.GetValue("meterstore.tiers")
		require.Equal(t, "cold+hot", tiers)
		mode, _ := md.GetValue("meterstore.read_mode")
		require.Equal(t, "unified", mode)
		dec, ok := schema.Field(1).Type.(*arrow.Decimal128Type)
		require.True(t, ok, "%s", schema.Field(1).Type)
		require.Equal(t, f.Oracle.Sum(all, all).StringFixed(dec.Scale), rows[0][1])
	})

	t.Run("streamed in batches", func(t *testing.T) {
		info, err := cl.Execute(ctx, `SELECT i, i * 2 AS j FROM range(300000) r(i)`)
		require.NoError(t, err)
		_, rows, batches := servetest.Fetch(t, ctx, cl, info)
		require.Len(t, rows, 300000)
		require.Greater(t, batches, 1)
	})

	t.Run("prepared statement with a parameter", func(t *testing.T) {
		ps, err := cl.Prepare(ctx, `SELECT count(*) FROM readings WHERE tenant = $1`)
		require.NoError(t, err)
		defer ps.Close(ctx)
		for _, tenant := range []string{"tenant01", "tenant02"} {
			b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}}, nil))
			b.Field(0).(*array.StringBuilder).Append(tenant)
			rec := b.NewRecordBatch()
			ps.SetParameters(rec)
			info, err := ps.Execute(ctx)
			require.NoError(t, err)
			_, rows, _ := servetest.Fetch(t, ctx, cl, info)
			want, err := f.Store.Engine.Query(bg, `SELECT count(*) FROM readings WHERE tenant = '`+tenant+`'`)
			require.NoError(t, err)
			require.Equal(t, want.Rows[0][0], rows[0][0])
			rec.Release()
			b.Release()
		}
	})

	t.Run("catalog calls", func(t *testing.T) {
		info, err := cl.GetTables(ctx, &arrowsql.GetTablesOpts{IncludeSchema: true})
		require.NoError(t, err)
		_, rows, _ := servetest.Fetch(t, ctx, cl, info)
		var names []string
		for _, r := range rows {
			names = append(names, r[2].(string))
		}
		require.ElementsMatch(t, []string{"readings", "readings_versions"}, names)
		info, err = cl.GetDBSchemas(ctx, &arrowsql.GetDBSchemasOpts{})
		require.NoError(t, err)
		_, rows, _ = servetest.Fetch(t, ctx, cl, info)
		require.Len(t, rows, 1)
		info, err = cl.GetSqlInfo(ctx, []arrowsql.SqlInfo{arrowsql.SqlInfoFlightSqlServerName, arrowsql.SqlInfoFlightSqlServerReadOnly})
		require.NoError(t, err)
		_, rows, _ = servetest.Fetch(t, ctx, cl, info)
		require.Len(t, rows, 2)
	})

	t.Run("mutations refused", func(t *testing.T) {
		_, err := cl.ExecuteUpdate(ctx, `DELETE FROM readings_versions`)
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
		require.Contains(t, err.Error(), "tier routing")
		require.Contains(t, err.Error(), "subject")
		_, err = cl.Execute(ctx, `DELETE FROM readings_versions`)
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
		_, err = cl.Prepare(ctx, `INSERT INTO readings_versions SELECT * FROM readings_versions`)
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
		_, err = cl.BeginTransaction(ctx)
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	})

	t.Run("scoped user", func(t *testing.T) {
		actx, err := cl.Client.AuthenticateBasicToken(bg, "alice", "alice-pw")
		require.NoError(t, err)
		for _, q := range []string{`SELECT DISTINCT tenant FROM readings_versions`, `SELECT DISTINCT tenant FROM readings WHERE tenant = 'tenant02' OR true`} {
			info, err := cl.Execute(actx, q)
			require.NoError(t, err)
			schema, rows, _ := servetest.Fetch(t, actx, cl, info)
			require.Equal(t, [][]any{{"tenant01"}}, rows, q)
			scope, _ := schema.Metadata().GetValue("meterstore.scope")
			require.Equal(t, "tenant=tenant01", scope)
		}
		_, err = cl.Execute(actx, `SELECT * FROM read_parquet('/etc/passwd')`)
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	})
}

// TestFlightSQLUnavailableWhilePostgreSQLIsDown: a statement that fails because
// PostgreSQL cannot be reached is Unavailable — the code a client retries —
// not InvalidArgument, which says the statement itself is wrong; once the
// database is back the same statement answers.
func TestFlightSQLUnavailableWhilePostgreSQLIsDown(t *testing.T) {
	f := servetest.NewWith(t, storetest.Options{PostgresProxy: true})
	ctx, cl := adminFlight(t, f)
	const q = `SELECT count(*) FROM readings`

	f.Store.Proxy.Down()
	_, err := cl.Execute(ctx, q)
	require.Equal(t, codes.Unavailable, status.Code(err), "%v", err)

	require.NoError(t, f.Store.Proxy.Up())
	// The pool's connections died with the database; a client retries on
	// Unavailable, as on a restarted server.
	var info *flight.FlightInfo
	for range 5 {
		if info, err = cl.Execute(ctx, q); status.Code(err) != codes.Unavailable {
			break
		}
	}
	require.NoError(t, err)
	_, rows, _ := servetest.Fetch(t, ctx, cl, info)
	require.EqualValues(t, f.Oracle.RowCount(time.Time{}, time.Time{}), rows[0][0])
}
