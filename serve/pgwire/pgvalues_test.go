package pgwire_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// pgResult is one single-row result as the wire carries it: each column's
// bytes, NULL as nil, or the SQLSTATE of the error it ended with.
type pgResult struct {
	values []string
	code   string
}

func (r pgResult) String() string {
	if r.code != "" {
		return "error " + r.code
	}
	return strings.Join(r.values, " | ")
}

// execRaw runs q with params of the given OIDs and formats and returns the raw
// bytes of its first row, every result column in resultFormat.
func execRaw(t *testing.T, c *pgx.Conn, q string, params []string, oids []uint32, paramFormat, resultFormat int16) pgResult {
	t.Helper()
	vals := make([][]byte, len(params))
	formats := make([]int16, len(params))
	for i, p := range params {
		vals[i] = []byte(p)
		formats[i] = paramFormat
	}
	res := c.PgConn().ExecParams(context.Background(), q, vals, oids, formats, []int16{resultFormat}).Read()
	if res.Err != nil {
		code := servetest.PGCode(res.Err)
		require.NotEmpty(t, code, "%s: %v", q, res.Err)
		return pgResult{code: code}
	}
	require.Len(t, res.Rows, 1, q)
	var out pgResult
	for _, v := range res.Rows[0] {
		if v == nil {
			out.values = append(out.values, "NULL")
			continue
		}
		if resultFormat == 1 {
			out.values = append(out.values, fmt.Sprintf("%x", v))
		} else {
			out.values = append(out.values, string(v))
		}
	}
	return out
}

// binaryTimestamp is PostgreSQL's binary timestamp: microseconds since
// 2000-01-01 of the wall time t shows (its zone ignored).
func binaryTimestamp(t time.Time) string {
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(wall.Sub(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).Microseconds()))
	return string(b[:])
}

// TestPGWireTimeValuesAsPostgreSQL runs the same statements against a real
// PostgreSQL (TimeZone Europe/Berlin) and msql serve over an engine in
// Europe/Berlin, and compares the bytes each sends, in text and in binary:
// ±infinity, timestamptz text in the session's zone, and timestamp
// parameters (OID 1114, what psycopg and JDBC bind a naive datetime as) read
// as wall times of the session's zone.
func TestPGWireTimeValuesAsPostgreSQL(t *testing.T) {
	const zone = "Europe/Berlin"
	f := servetest.NewWith(t, storetest.Options{TimeZone: zone})
	_, addr := f.StartPG(t, f.Users(t))
	ms := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeCacheStatement, nil)
	ref := pgtest.Connect(t, pgtest.Database(t))
	pgtest.Exec(t, ref, "SET TimeZone = '"+zone+"'")

	minInt, maxInt := make([]byte, 8), make([]byte, 8)
	binary.BigEndian.PutUint64(minInt, 1<<63)
	binary.BigEndian.PutUint64(maxInt, uint64(math.MaxInt64))
	midnight := "2025-10-24 00:00:00"
	wall := time.Date(2025, 10, 24, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		q      string
		params []string
		oids   []uint32
		format int16 // of the parameters
	}{
		{name: "infinity", q: `SELECT TIMESTAMPTZ '-infinity', TIMESTAMPTZ 'infinity', TIMESTAMP '-infinity', TIMESTAMP 'infinity', DATE '-infinity', DATE 'infinity'`},
		{name: "timestamptz in the session zone", q: `SELECT TIMESTAMPTZ '2025-10-23 04:00:00.5+02', TIMESTAMPTZ '2025-12-23 04:00:00+00', TIMESTAMPTZ '2025-10-24 00:00:00'`},
		{name: "timestamp parameter, text", q: `SELECT $1::timestamptz, $1::timestamp`, params: []string{midnight}, oids: []uint32{1114}},
		{name: "timestamp parameter, binary", q: `SELECT $1::timestamptz, $1::timestamp`, params: []string{binaryTimestamp(wall)}, oids: []uint32{1114}, format: 1},
		{name: "timestamptz parameter without offset, text", q: `SELECT $1::timestamptz`, params: []string{midnight}, oids: []uint32{1184}},
		{name: "timestamptz parameter -infinity, binary", q: `SELECT $1::timestamptz`, params: []string{string(minInt)}, oids: []uint32{1184}, format: 1},
		{name: "timestamp parameter infinity, binary", q: `SELECT $1::timestamp`, params: []string{string(maxInt)}, oids: []uint32{1114}, format: 1},
	}
	for _, tc := range cases {
		for _, rf := range []int16{0, 1} {
			t.Run(fmt.Sprintf("%s/results=%s", tc.name, map[int16]string{0: "text", 1: "binary"}[rf]), func(t *testing.T) {
				want := execRaw(t, ref, tc.q, tc.params, tc.oids, tc.format, rf)
				got := execRaw(t, ms, tc.q, tc.params, tc.oids, tc.format, rf)
				require.Equal(t, want.String(), got.String(), "PostgreSQL sent the first, msql serve the second")
			})
		}
	}

	t.Run("a day's window bound as timestamp parameters", func(t *testing.T) {
		day := f.Cut.Add(-24 * time.Hour).In(mustZone(t, zone))
		lo, hi := day.Format("2006-01-02")+" 00:00:00", day.Add(24*time.Hour).Format("2006-01-02")+" 00:00:00"
		q := `SELECT count(*), sum(value) FROM readings WHERE "from" >= %s AND "from" < %s`
		literal := execRaw(t, ms, fmt.Sprintf(q, "'"+lo+"'", "'"+hi+"'"), nil, nil, 0, 0)
		for _, format := range []int16{0, 1} {
			params := []string{lo, hi}
			if format == 1 {
				l, _ := time.Parse(time.DateTime, lo)
				h, _ := time.Parse(time.DateTime, hi)
				params = []string{binaryTimestamp(l), binaryTimestamp(h)}
			}
			bound := execRaw(t, ms, fmt.Sprintf(q, "$1", "$2"), params, []uint32{1114, 1114}, format, 0)
			require.Equal(t, literal.String(), bound.String(), "format %d: the parameters must mean what the literals mean", format)
		}
		loT, _ := time.ParseInLocation(time.DateTime, lo, mustZone(t, zone))
		hiT, _ := time.ParseInLocation(time.DateTime, hi, mustZone(t, zone))
		require.Len(t, literal.values, 2)
		require.Equal(t, fmt.Sprint(f.Oracle.RowCount(loT, hiT)), literal.values[0])
		sum, err := decimal.NewFromString(literal.values[1])
		require.NoError(t, err)
		require.True(t, f.Oracle.Sum(loT, hiT).Equal(sum), "literal window: %s, oracle %s", sum, f.Oracle.Sum(loT, hiT))
	})
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// TestPGWireBindFormatCountsAsPostgreSQL: a Bind whose format codes do not
// match the statement is a protocol error (08P01) to the client, as PostgreSQL
// answers it, and the connection goes on serving.
func TestPGWireBindFormatCountsAsPostgreSQL(t *testing.T) {
	f := servetest.New(t)
	_, addr := f.StartPG(t, f.Users(t))
	ref := pgtest.Connect(t, pgtest.Database(t))
	ctx := context.Background()
	cases := []struct {
		name          string
		q             string
		params        [][]byte
		paramFormats  []int16
		resultFormats []int16
	}{
		{name: "more result formats than columns", q: `SELECT 1 AS a, 2 AS b`, resultFormats: []int16{0, 1, 0, 1}},
		{name: "two result formats for three columns", q: `SELECT 1 AS a, 2 AS b, 3 AS c`, resultFormats: []int16{1, 1}},
		{name: "an unknown result format", q: `SELECT 1 AS a`, resultFormats: []int16{7}},
		{name: "more parameter formats than parameters", q: `SELECT $1::int AS a`, params: [][]byte{[]byte("1")}, paramFormats: []int16{0, 0, 0}},
		{name: "fewer parameters than the statement has", q: `SELECT $1::int + $2::int AS a`, params: [][]byte{[]byte("1")}, paramFormats: []int16{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeCacheStatement, nil)
			codes := map[string]string{}
			for name, c := range map[string]*pgx.Conn{"postgresql": ref, "msql": ms} {
				res := c.PgConn().ExecParams(ctx, tc.q, tc.params, nil, tc.paramFormats, tc.resultFormats).Read()
				codes[name] = servetest.PGCode(res.Err)
				t.Logf("%s: %v", name, res.Err)
				var n int
				require.NoError(t, c.QueryRow(ctx, `SELECT 41 + 1`).Scan(&n), "%s: the connection goes on", name)
				require.Equal(t, 42, n)
			}
			require.Equal(t, codes["postgresql"], codes["msql"], "SQLSTATE: PostgreSQL sent the first, msql serve the second")
			require.NotEmpty(t, codes["postgresql"])
		})
	}
}
