package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/icebergrest"
	"github.com/meterstore/meterstore/serve/internal/servetest"
)

// A request that panics ends with an error to its own client, the panic is
// logged, and every server keeps answering the others.
func TestServersSurviveAPanickingRequest(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	const normal = `SELECT count(*) FROM readings`
	want, err := f.Store.Engine.Query(ctx, normal)
	require.NoError(t, err)
	count := want.Rows[0][0]

	t.Run("pgwire", func(t *testing.T) {
		_, addr := f.StartPG(t, f.Users(t))
		before := f.Panics.Load()
		other := servetest.PGConnect(t, addr, "x", "", pgx.QueryExecModeSimpleProtocol, nil)
		r := servetest.DialRawPG(t, addr)
		r.FE.Send(&pgproto3.Query{String: "SELECT 1 " + servetest.PanicMarker})
		require.NoError(t, r.FE.Flush())
		msgs, err := r.UntilClosed()
		require.ErrorIs(t, err, io.EOF)
		require.NotEmpty(t, msgs)
		e, ok := msgs[len(msgs)-1].(*pgproto3.ErrorResponse)
		require.True(t, ok, "%T", msgs[len(msgs)-1])
		require.Equal(t, "XX000", e.Code)
		require.Contains(t, e.Message, "internal error")
		require.Equal(t, before+1, f.Panics.Load(), "the panic is logged")

		var n int64
		require.NoError(t, other.QueryRow(ctx, normal).Scan(&n))
		require.EqualValues(t, count, n)
		fresh := servetest.PGConnect(t, addr, "x", "", pgx.QueryExecModeDescribeExec, nil)
		require.NoError(t, fresh.QueryRow(ctx, normal).Scan(&n))
		require.EqualValues(t, count, n)
	})

	t.Run("flightsql", func(t *testing.T) {
		cl, err := arrowsql.NewClient(f.StartFlight(t, f.Users(t)), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer cl.Close()
		before := f.Panics.Load()
		info, err := cl.Execute(ctx, "SELECT 1 "+servetest.PanicMarker)
		require.NoError(t, err)
		rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
		require.NoError(t, err)
		for rdr.Next() {
		}
		require.Equal(t, codes.Internal, status.Code(rdr.Err()), "%v", rdr.Err())
		require.Contains(t, rdr.Err().Error(), "internal error")
		rdr.Release()
		require.Equal(t, before+1, f.Panics.Load(), "the panic is logged")

		info, err = cl.Execute(ctx, normal)
		require.NoError(t, err)
		_, rows, _ := servetest.Fetch(t, ctx, cl, info)
		require.EqualValues(t, [][]any{{count}}, rows)
	})

	t.Run("iceberg-rest", func(t *testing.T) {
		calls := 0
		srv := &icebergrest.Server{Catalog: f.Store.Catalog.Iceberg(), Tables: servetest.TablesOf(f.Store.Table().Config), Users: f.Users(t), Log: f.Log,
			Ready: func(context.Context) error {
				if calls++; calls == 1 {
					panic("test fault: the first readiness check")
				}
				return nil
			}}
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		before := f.Panics.Load()
		res, err := http.Get(hs.URL + "/readyz")
		require.NoError(t, err)
		var body struct{ Error struct{ Message string } }
		require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
		res.Body.Close()
		require.Equal(t, http.StatusInternalServerError, res.StatusCode)
		require.Contains(t, body.Error.Message, "internal error")
		require.Equal(t, before+1, f.Panics.Load(), "the panic is logged")

		for _, path := range []string{"/readyz", "/v1/namespaces"} {
			res, err = http.Get(hs.URL + path)
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, path)
		}
	})
}
