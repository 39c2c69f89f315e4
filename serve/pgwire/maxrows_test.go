package pgwire_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/serve/pgwire"
)

// TestPGWireMaxResultRowsEverywhere: max_result_rows bounds a statement's
// result however the client reads it — a cursor read by FETCH, a portal read
// by Execute with a row limit, COPY (query) TO STDOUT — as it bounds a plain
// query: the rows within the bound, then SQLSTATE 54000 naming the limit.
func TestPGWireMaxResultRowsEverywhere(t *testing.T) {
	f := servetest.New(t)
	addr := servetest.ServePGOn(t, &pgwire.Server{Users: f.Users(t), Log: f.Log, Limits: access.Limits{MaxResultRows: 10}}, "127.0.0.1:0")
	ctx := context.Background()
	const q = `SELECT malo_id, value FROM readings`
	limited := func(t *testing.T, err error) {
		t.Helper()
		require.Equal(t, "54000", servetest.PGCode(err), "%v", err)
		require.ErrorContains(t, err, "limit of 10 rows per statement (max_result_rows)")
	}

	t.Run("plain query", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "pw", pgx.QueryExecModeSimpleProtocol, nil)
		rs, err := c.Query(ctx, q)
		require.NoError(t, err)
		n := 0
		for rs.Next() {
			n++
		}
		limited(t, rs.Err())
		require.Equal(t, 10, n)
	})

	for mode, m := range map[string]pgx.QueryExecMode{"simple": pgx.QueryExecModeSimpleProtocol, "extended": pgx.QueryExecModeCacheStatement} {
		t.Run("cursor "+mode, func(t *testing.T) {
			c := servetest.PGConnect(t, addr, "admin", "pw", m, nil)
			tx, err := c.Begin(ctx)
			require.NoError(t, err)
			defer tx.Rollback(ctx)
			_, err = tx.Exec(ctx, "DECLARE c NO SCROLL CURSOR FOR "+q)
			require.NoError(t, err)
			rs, err := tx.Query(ctx, "FETCH FORWARD 6 FROM c")
			require.NoError(t, err)
			n := 0
			for rs.Next() {
				n++
			}
			require.NoError(t, rs.Err())
			require.Equal(t, 6, n, "within the bound")
			rs, err = tx.Query(ctx, "FETCH ALL FROM c")
			require.NoError(t, err)
			n = 0
			for rs.Next() {
				n++
			}
			limited(t, rs.Err())
			require.Equal(t, 4, n, "the rest of the bound, then the refusal")
		})
	}

	t.Run("portal with a row limit", func(t *testing.T) {
		r := servetest.DialRawPG(t, addr)
		r.FE.Send(&pgproto3.Parse{Query: q})
		r.FE.Send(&pgproto3.Bind{})
		for range 3 {
			r.FE.Send(&pgproto3.Execute{MaxRows: 4})
		}
		r.FE.Send(&pgproto3.Sync{})
		require.NoError(t, r.FE.Flush())
		rows, suspended := 0, 0
		for {
			msg, err := r.FE.Receive()
			require.NoError(t, err)
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				rows++
			case *pgproto3.PortalSuspended:
				suspended++
			case *pgproto3.ErrorResponse:
				require.Equal(t, "54000", m.Code, m.Message)
				require.Contains(t, m.Message, "(max_result_rows)")
				require.Equal(t, 10, rows, "4 + 4 + 2 rows, then the refusal")
				require.Equal(t, 2, suspended)
				return
			case *pgproto3.CommandComplete:
				t.Fatalf("the portal completed after %d rows over a bound of 10", rows)
			}
		}
	})

	t.Run("COPY TO STDOUT", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "pw", pgx.QueryExecModeSimpleProtocol, nil)
		var out bytes.Buffer
		_, err := c.PgConn().CopyTo(ctx, &out, "COPY ("+q+") TO STDOUT")
		limited(t, err)
		require.Equal(t, 10, strings.Count(out.String(), "\n"), "the rows within the bound")
	})
}
