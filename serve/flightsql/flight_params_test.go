package flightsql_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestFlightSQLQuestionMarkParameters: the ADBC driver and the Flight SQL
// JDBC driver prepare statements with ? placeholders (JDBC's syntax, which
// DuckDB takes); preparing must count them, as it counts $n.
func TestFlightSQLQuestionMarkParameters(t *testing.T) {
	f := servetest.New(t)
	addr := f.StartFlight(t, f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"}))
	cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	bg := context.Background()
	ctx, err := cl.Client.AuthenticateBasicToken(bg, "admin", "s3cret")
	require.NoError(t, err)

	ps, err := cl.Prepare(ctx, `SELECT count(*) FROM readings WHERE tenant = ? AND malo_id <> ? AND '?' = '?'`)
	require.NoError(t, err)
	defer ps.Close(ctx)
	require.Equal(t, 2, ps.ParameterSchema().NumFields(), "a ? inside a string literal is no parameter")
	fields := []arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}, {Name: "$2", Type: arrow.BinaryTypes.String}}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("tenant02")
	b.Field(1).(*array.StringBuilder).Append("none")
	rec := b.NewRecordBatch()
	defer rec.Release()
	ps.SetParameters(rec)
	info, err := ps.Execute(ctx)
	require.NoError(t, err)
	_, rows, _ := servetest.Fetch(t, ctx, cl, info)
	want, err := f.Store.Engine.Query(bg, `SELECT count(*) FROM readings WHERE tenant = 'tenant02'`)
	require.NoError(t, err)
	require.Equal(t, want.Rows[0][0], rows[0][0])
}
