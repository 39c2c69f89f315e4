package flightsql_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/meterstore/meterstore/serve/internal/servetest"
)

// flightBatches are the FlightData messages of one record batch: its schema
// message, then the batch.
type flightBatches []*flight.FlightData

func (b *flightBatches) Send(fd *flight.FlightData) error {
	*b = append(*b, proto.Clone(fd).(*flight.FlightData))
	return nil
}

// parameterBatch is the Arrow IPC a client binds one text parameter with.
func parameterBatch(t testing.TB, value string) flightBatches {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(value)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out flightBatches
	w := flight.NewRecordWriter(&out, ipc.WithSchema(sc))
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.Len(t, out, 2)
	return out
}

// The Flight calls FuzzFlight makes, by its first argument (modulo their count).
const (
	fuzzDoPut = iota
	fuzzDoAction
	fuzzGetFlightInfo
	fuzzDoGet
	fuzzGetSchema
	fuzzPollFlightInfo
	fuzzBindParameters
	fuzzCalls
)

// FuzzFlight sends arbitrary commands, tickets, action bodies and Arrow IPC
// messages to the Flight SQL server: every call ends (with any status but
// Internal), and nothing panics.
func FuzzFlight(f *testing.F) {
	fx := servetest.New(f)
	cl, err := arrowsql.NewClient(fx.StartFlight(f, fx.Users(f)), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(f, err)
	f.Cleanup(func() { cl.Close() })
	ctx := context.Background()
	ps, err := cl.Prepare(ctx, `SELECT count(*) FROM readings WHERE tenant = $1`)
	require.NoError(f, err)

	query := flightCmd(f, &pb.CommandStatementQuery{Query: "SELECT tenant, count(*) FROM readings GROUP BY ALL"})
	ticket := flightCmd(f, &pb.TicketStatementQuery{StatementHandle: []byte("SELECT 1")})
	tables := flightCmd(f, &pb.CommandGetTables{IncludeSchema: true})
	update := flightCmd(f, &pb.CommandStatementUpdate{Query: "DELETE FROM readings_versions"})
	prepare := flightCmd(f, &pb.ActionCreatePreparedStatementRequest{Query: "SELECT $1"})
	bound := parameterBatch(f, "tenant01")
	bind := flightCmd(f, &pb.CommandPreparedStatementQuery{PreparedStatementHandle: ps.Handle()})
	for _, seed := range []struct {
		call    uint8
		typ     string
		a, b, c []byte
	}{
		{fuzzDoPut, "", nil, []byte{1, 2, 3}, nil},
		{fuzzDoPut, "", update, []byte{1, 2, 3}, []byte{4}},
		{fuzzDoPut, "", query, nil, nil},
		{fuzzDoAction, arrowsql.CreatePreparedStatementActionType, prepare, nil, nil},
		{fuzzDoAction, arrowsql.ClosePreparedStatementActionType, []byte{0x0a, 0x01}, nil, nil},
		{fuzzDoAction, arrowsql.BeginTransactionActionType, nil, nil, nil},
		{fuzzGetFlightInfo, "", query, nil, nil},
		{fuzzGetFlightInfo, "", tables, nil, nil},
		{fuzzDoGet, "", ticket, nil, nil},
		{fuzzDoGet, "", tables, nil, nil},
		{fuzzGetSchema, "", query, nil, nil},
		{fuzzPollFlightInfo, "", query, nil, nil},
		{fuzzBindParameters, "", bound[0].DataHeader, bound[1].DataHeader, bound[1].DataBody},
	} {
		f.Add(seed.call, seed.typ, seed.a, seed.b, seed.c)
	}
	f.Fuzz(func(t *testing.T, call uint8, typ string, a, b, c []byte) {
		before := fx.Panics.Load()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := flightCall(cctx, cl.Client, bind, call%fuzzCalls, typ, a, b, c)
		require.NotEqual(t, codes.Internal, status.Code(err), "%v", err)
		require.NotEqual(t, codes.DeadlineExceeded, status.Code(err), "the call must end: %v", err)
		require.Equal(t, before, fx.Panics.Load(), "a request panicked (see the log)")
	})
}

// flightCall makes one of FuzzFlight's calls and reads its answer to the end;
// bind is the descriptor command that binds a prepared statement's parameters.
func flightCall(ctx context.Context, cl flight.Client, bind []byte, call uint8, typ string, a, b, c []byte) error {
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: a}
	switch call {
	case fuzzDoPut:
		first := &flight.FlightData{DataHeader: b, DataBody: c}
		if len(a) > 0 {
			first.FlightDescriptor = desc
		}
		return put(ctx, cl, first)
	case fuzzBindParameters:
		return put(ctx, cl, &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: bind}, DataHeader: a},
			&flight.FlightData{DataHeader: b, DataBody: c})
	case fuzzDoAction:
		return act(ctx, cl, &flight.Action{Type: typ, Body: a})
	case fuzzGetFlightInfo:
		_, err := cl.GetFlightInfo(ctx, desc)
		return err
	case fuzzDoGet:
		stream, err := cl.DoGet(ctx, &flight.Ticket{Ticket: a})
		if err != nil {
			return err
		}
		return drain(stream.Recv)
	case fuzzGetSchema:
		_, err := cl.GetSchema(ctx, desc)
		return err
	case fuzzPollFlightInfo:
		_, err := cl.PollFlightInfo(ctx, desc)
		return err
	}
	panic("unknown call")
}
