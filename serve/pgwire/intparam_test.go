package pgwire_test

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
)

// int8Param is n as a client binding an int8 sends it (JDBC setLong, a
// Parse naming oid 20): in binary.
func int8Param(n int64) ([][]byte, []uint32, []int16) {
	return [][]byte{binary.BigEndian.AppendUint64(nil, uint64(n))}, []uint32{20}, []int16{1}
}

// execLines runs q with params and returns its rows' first columns.
func execLines(t *testing.T, c *pgx.Conn, q string, values [][]byte, oids []uint32, formats []int16) ([]string, error) {
	t.Helper()
	rr := c.PgConn().ExecParams(context.Background(), q, values, oids, formats, nil).Read()
	var lines []string
	for _, r := range rr.Rows {
		lines = append(lines, string(r[0]))
	}
	return lines, rr.Err
}

// TestPGWireMaLoAsInt8ComparesAsText: a client that binds the MaLo as an
// int8 (JDBC setLong on malo_id = ?) reads the meter's rows as one that
// sends it as text, and DuckDB compares the column as text — not the column
// cast to BIGINT, which no pushed-down equality or Parquet statistics can
// serve. An int8 compared with another text identifier (obis_code, whose
// values an integer's digits cannot spell exactly) is refused as PostgreSQL
// refuses text = bigint, naming the parameter and the fix.
func TestPGWireMaLoAsInt8ComparesAsText(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	_, addr := f.StartPG(t, f.Users(t))
	c := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeExec, nil)
	var malo string
	require.NoError(t, c.QueryRow(ctx, `SELECT min(malo_id) FROM readings`).Scan(&malo))
	n, err := strconv.ParseInt(malo, 10, 64)
	require.NoError(t, err)

	const count = `SELECT count(*)::VARCHAR || ' ' || sum(value)::VARCHAR FROM readings WHERE malo_id = $1`
	want, err := execLines(t, c, count, [][]byte{[]byte(malo)}, []uint32{25}, []int16{0})
	require.NoError(t, err)
	require.NotEqual(t, "0", strings.Fields(want[0])[0])
	values, oids, formats := int8Param(n)
	for range 2 { // planned, then served its plan again
		got, err := execLines(t, c, count, values, oids, formats)
		require.NoError(t, err)
		require.Equal(t, want, got, "the meter's count and sum, MaLo bound as int8")
	}

	plan, err := execLines(t, c, `EXPLAIN ANALYZE SELECT "from", value FROM readings WHERE malo_id = $1`, values, oids, formats)
	require.NoError(t, err)
	text := strings.Join(plan, "\n")
	require.Contains(t, text, "(malo_id = '"+malo+"')", "DuckDB compares the column with the MaLo's text")
	require.NotContains(t, text, "CAST(malo_id AS BIGINT)", "DuckDB casts the column to the int8's type")

	_, err = execLines(t, c, `SELECT count(*) FROM readings WHERE obis_code = $1`, values, oids, formats)
	require.Error(t, err)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "42883", pe.Code, pe.Message)
	require.Contains(t, pe.Message, "parameter $1 is compared with the text column obis_code")
	require.Contains(t, pe.Message, "send the parameter as text")
}
