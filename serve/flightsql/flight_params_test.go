package flightsql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestFlightSQLQuestionMarkParameters: the ADBC driver and the Flight SQL
// JDBC driver prepare statements with ? placeholders (JDBC's syntax, which
// DuckDB takes); preparing must count them, as it counts $n.
func TestFlightSQLQuestionMarkParameters(t *testing.T) {
	f := servetest.New(t)
	ctx, cl := adminFlight(t, f)
	// Two parameters, counted by flightPrepared: a ? inside a string literal is none.
	rows := flightPrepared(t, ctx, cl, `SELECT count(*) FROM readings WHERE tenant = ? AND malo_id <> ? AND '?' = '?'`,
		arrow.BinaryTypes.String, func(b array.Builder, i int) {
			b.(*array.StringBuilder).Append([]string{"tenant02", "none"}[i])
		})
	want, err := f.Store.Engine.Query(context.Background(), `SELECT count(*) FROM readings WHERE tenant = 'tenant02'`)
	require.NoError(t, err)
	require.Equal(t, want.Rows[0][0], rows[0][0])
}

// TestFlightTimeParametersInSessionZone: an Arrow timestamp without a time
// zone is a wall time (the Arrow spec's "naive" timestamp — what ADBC binds a
// pandas or Java LocalDateTime as) and a date32 a calendar day; over an engine
// in Europe/Berlin a day's window bound as such parameters must count what
// the same wall times written as literals count, as pgwire's timestamp
// parameters (OID 1114) do. A timestamp with a zone is an instant.
func TestFlightTimeParametersInSessionZone(t *testing.T) {
	const zone = "Europe/Berlin"
	f := servetest.NewWith(t, storetest.Options{TimeZone: zone})
	ctx, cl := adminFlight(t, f)
	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	day := f.Cut.Add(-24 * time.Hour).In(loc)
	lo := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
	hi := lo.AddDate(0, 0, 1)
	wall := func(t time.Time) time.Time {
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	}
	window := `SELECT count(*), sum(value) FROM readings WHERE "from" >= %s AND "from" < %s`
	literal, err := servetest.FlightRows(ctx, cl, fmt.Sprintf(window,
		"'"+lo.Format(time.DateTime)+"'", "'"+hi.Format(time.DateTime)+"'"))
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(f.Oracle.RowCount(lo, hi)), fmt.Sprint(literal[0][0]), "the literal window counts the day")

	naive := &arrow.TimestampType{Unit: arrow.Microsecond}
	zoned := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	cases := []struct {
		name   string
		typ    arrow.DataType
		lo, hi time.Time
	}{
		{"naive timestamps are wall times of the session's zone", naive, wall(lo), wall(hi)},
		{"zoned timestamps are instants", zoned, lo.UTC(), hi.UTC()},
	}
	for _, tc := range cases {
		got := flightPrepared(t, ctx, cl, fmt.Sprintf(window, "?", "?"), tc.typ, func(b array.Builder, i int) {
			v := []time.Time{tc.lo, tc.hi}[i]
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.UnixMicro()))
		})
		require.Equal(t, fmt.Sprint(literal), fmt.Sprint(got), "%s: the parameters must mean what the literals mean", tc.name)
	}

	byDay := `SELECT count(*), sum(value) FROM readings WHERE balancing_day >= %s AND balancing_day < %s`
	literalDays, err := servetest.FlightRows(ctx, cl, fmt.Sprintf(byDay, "DATE '"+lo.Format(time.DateOnly)+"'", "DATE '"+hi.Format(time.DateOnly)+"'"))
	require.NoError(t, err)
	require.NotEqual(t, "0", fmt.Sprint(literalDays[0][0]), "the day holds rows")
	got := flightPrepared(t, ctx, cl, fmt.Sprintf(byDay, "?", "?"), arrow.FixedWidthTypes.Date32, func(b array.Builder, i int) {
		b.(*array.Date32Builder).Append(arrow.Date32FromTime(wall([]time.Time{lo, hi}[i])))
	})
	require.Equal(t, fmt.Sprint(literalDays), fmt.Sprint(got), "date32 parameters are the days the literals name")
}

// adminFlight starts a Flight SQL server over f with one unscoped user and
// returns a client authenticated as that user (closed when t ends).
func adminFlight(t *testing.T, f *servetest.Fixture) (context.Context, *arrowsql.Client) {
	t.Helper()
	addr := f.StartFlight(t, f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"}))
	cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	ctx, err := cl.Client.AuthenticateBasicToken(context.Background(), "admin", "s3cret")
	require.NoError(t, err)
	return ctx, cl
}

// flightPrepared prepares q, checks it has two parameters, binds them as
// typ (set appends value i to the builder) and fetches the rows.
func flightPrepared(t *testing.T, ctx context.Context, cl *arrowsql.Client, q string, typ arrow.DataType, set func(b array.Builder, i int)) [][]any {
	t.Helper()
	ps, err := cl.Prepare(ctx, q)
	require.NoError(t, err)
	defer ps.Close(ctx)
	require.Equal(t, 2, ps.ParameterSchema().NumFields(), "the statement's parameters as the server counts them")
	fields := []arrow.Field{{Name: "$1", Type: typ}, {Name: "$2", Type: typ}}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := range fields {
		set(b.Field(i), i)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	ps.SetParameters(rec)
	info, err := ps.Execute(ctx)
	require.NoError(t, err)
	_, rows, _ := servetest.Fetch(t, ctx, cl, info)
	return rows
}
