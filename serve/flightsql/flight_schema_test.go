package flightsql_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// The schema GetFlightInfo announces is the schema DoGet streams: the same
// fields and the same provenance keys and values. A client that reads the
// provenance off the FlightInfo (ADBC's GetSchema, the JDBC driver's result
// metadata) must not see less of it than one reading the stream.
func TestFlightInfoSchemaIsTheStreamSchema(t *testing.T) {
	f := servetest.New(t)
	users := f.Users(t,
		settings.UserSettings{Name: "admin", Password: "s3cret"},
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"},
	)
	cl, err := arrowsql.NewClient(f.StartFlight(t, users), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer cl.Close()
	bg := context.Background()
	same := func(t *testing.T, ctx context.Context, info *flight.FlightInfo) {
		t.Helper()
		announced, err := flight.DeserializeSchema(info.Schema, memory.DefaultAllocator)
		require.NoError(t, err)
		streamed, _, _ := servetest.Fetch(t, ctx, cl, info)
		require.True(t, announced.Equal(streamed), "fields: announced %s, streamed %s", announced, streamed)
		require.Equal(t, streamed.Metadata().ToMap(), announced.Metadata().ToMap(), "provenance keys and values")
		for _, k := range []string{"meterstore.watermark", "meterstore.watermarks", "meterstore.tiers", "meterstore.read_mode",
			"meterstore.snapshot_ids", "meterstore.time_zone"} {
			_, ok := announced.Metadata().GetValue(k)
			require.True(t, ok, "GetFlightInfo's schema lacks %s: %v", k, announced.Metadata())
		}
	}
	for user, pw := range map[string]string{"admin": "s3cret", "alice": "alice-pw"} {
		ctx, err := cl.Client.AuthenticateBasicToken(bg, user, pw)
		require.NoError(t, err)
		t.Run(user+" statement", func(t *testing.T) {
			info, err := cl.Execute(ctx, `SELECT tenant, count(*) AS n, sum(value) AS s, min("from") AS first, max("from")::DATE AS day FROM readings GROUP BY ALL`)
			require.NoError(t, err)
			same(t, ctx, info)
		})
		t.Run(user+" prepared", func(t *testing.T) {
			ps, err := cl.Prepare(ctx, `SELECT count(*) AS n, sum(value) AS s FROM readings WHERE tenant = $1`)
			require.NoError(t, err)
			defer ps.Close(ctx)
			b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}}, nil))
			defer b.Release()
			b.Field(0).(*array.StringBuilder).Append("tenant01")
			rec := b.NewRecordBatch()
			defer rec.Release()
			ps.SetParameters(rec)
			info, err := ps.Execute(ctx)
			require.NoError(t, err)
			same(t, ctx, info)
		})
	}
}
