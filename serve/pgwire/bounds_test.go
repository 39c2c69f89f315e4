package pgwire_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/serve/pgwire"
)

// errorOf reads a raw client's messages up to ReadyForQuery and returns the
// error among them.
func errorOf(t *testing.T, r *servetest.RawPG) *pgproto3.ErrorResponse {
	t.Helper()
	var e *pgproto3.ErrorResponse
	for {
		msg, err := r.FE.Receive()
		require.NoError(t, err)
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			c := *m
			e = &c
		case *pgproto3.ReadyForQuery:
			require.NotNil(t, e, "the server answered without an error")
			return e
		}
	}
}

// TestPGWireBoundsBeforeParsing: a 30 MB `SELECT 1+1+…` is refused with the
// limit named (54000) before the dialect layer tokenizes it — the server
// allocates a few bytes per byte of statement (reading the message), not the
// ~100 it took to translate — and deep nesting (54001), too many parameters
// (54000) and a result over the server's row bound (54000) are refused the
// same way; each session goes on.
func TestPGWireBoundsBeforeParsing(t *testing.T) {
	f := servetest.New(t)
	addr := servetest.ServePGOn(t, &pgwire.Server{Users: f.Users(t), Log: f.Log, Limits: access.Limits{MaxResultRows: 10}}, "127.0.0.1:0")
	ctx := context.Background()

	t.Run("30 MB statement", func(t *testing.T) {
		r := servetest.DialRawPG(t, addr)
		huge := "SELECT 1" + strings.Repeat("+1", 15_000_000)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r.FE.Send(&pgproto3.Query{String: huge})
		require.NoError(t, r.FE.Flush())
		e := errorOf(t, r)
		runtime.ReadMemStats(&after)
		require.Equal(t, "54000", e.Code, e.Message)
		require.Contains(t, e.Message, "statement of 30000008 bytes exceeds the server's limit of 1048576 bytes per statement (max_statement_bytes)")
		perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(huge))
		t.Logf("allocated %.1f bytes per byte of statement (client and server)", perByte)
		require.Less(t, perByte, 25.0, "the statement was read, not processed")
	})

	t.Run("nesting, parameters", func(t *testing.T) {
		r := servetest.DialRawPG(t, addr)
		deep := "SELECT " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000)
		r.FE.Send(&pgproto3.Query{String: deep})
		require.NoError(t, r.FE.Flush())
		e := errorOf(t, r)
		require.Equal(t, "54001", e.Code, e.Message)
		require.Contains(t, e.Message, "parentheses nested more than 1000 deep (max_nesting)")

		r.FE.Send(&pgproto3.Parse{Query: "SELECT $70000::int"})
		r.FE.Send(&pgproto3.Sync{})
		require.NoError(t, r.FE.Flush())
		e = errorOf(t, r)
		require.Equal(t, "54000", e.Code, e.Message)
		require.Contains(t, e.Message, "statement has 70000 parameters, more than the server's limit of 65535 (max_parameters)")

		r.FE.Send(&pgproto3.Query{String: "SELECT '((((' AS \"(((\", $$((($$ AS x -- ((((\n"})
		require.NoError(t, r.FE.Flush())
		for {
			msg, err := r.FE.Receive()
			require.NoError(t, err)
			_, failed := msg.(*pgproto3.ErrorResponse)
			require.False(t, failed, "parentheses in literals do not nest: %+v", msg)
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	})

	t.Run("result rows", func(t *testing.T) {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			c := servetest.PGConnect(t, addr, "raw", "x", mode, nil)
			rows, err := c.Query(ctx, `SELECT * FROM readings`)
			require.NoError(t, err)
			n := 0
			for rows.Next() {
				n++
			}
			err = rows.Err()
			require.Equal(t, "54000", servetest.PGCode(err), "%v", err)
			require.ErrorContains(t, err, "the result exceeds the server's limit of 10 rows per statement (max_result_rows)")
			require.Equal(t, 10, n)
			var k int
			require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&k), "the session goes on")
			require.Greater(t, k, 10)
		}
	})
}
