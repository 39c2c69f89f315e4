package pgwire_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// TestPGWireCopyAndExplainAreReads: COPY (query) TO STDOUT and COPY relation
// TO STDOUT — psql's \copy … TO 'file' — answer the query's rows in
// PostgreSQL's text and CSV formats, byte for byte as PostgreSQL writes them;
// EXPLAIN [ANALYZE] answers QUERY PLAN rows; the HINT on tier routing comes
// with real writes only.
func TestPGWireCopyAndExplainAreReads(t *testing.T) {
	f := servetest.New(t)
	_, addr := f.StartPG(t, f.Users(t))
	psql := newPsql(t, addr, "meterstore", "")
	all := time.Time{}
	total := f.Oracle.RowCount(all, all)

	t.Run("psql", func(t *testing.T) {
		byTenant := strings.TrimSpace(psql.ok(t, nil, "-At", "-F", "\t", "-c", `SELECT tenant, count(*) AS n FROM readings GROUP BY tenant ORDER BY tenant`))
		require.Len(t, strings.Split(byTenant, "\n"), 2)
		out := psql.ok(t, nil, "-c", `COPY (SELECT tenant, count(*) AS n FROM readings GROUP BY tenant ORDER BY tenant) TO STDOUT`)
		require.Equal(t, byTenant+"\n", out)
		out = psql.ok(t, nil, "-c", `COPY (SELECT tenant, count(*) AS n FROM readings GROUP BY tenant ORDER BY tenant) TO STDOUT WITH (FORMAT csv, HEADER)`)
		require.Equal(t, "tenant,n\n"+strings.ReplaceAll(byTenant, "\t", ",")+"\n", out)

		psql.ok(t, nil, "-c", `\copy (SELECT tenant, count(*) AS n FROM readings GROUP BY tenant ORDER BY tenant) TO 'tenants.csv' WITH CSV HEADER`)
		b, err := os.ReadFile(psql.file("tenants.csv"))
		require.NoError(t, err)
		require.Equal(t, "tenant,n\n"+strings.ReplaceAll(byTenant, "\t", ",")+"\n", string(b))

		out = psql.ok(t, nil, "-c", `\copy readings TO 'readings.txt'`)
		require.Equal(t, fmt.Sprintf("COPY %d\n", total), out)
		b, err = os.ReadFile(psql.file("readings.txt"))
		require.NoError(t, err)
		require.Equal(t, total, strings.Count(string(b), "\n"))

		out, ok := psql.run(t, nil, "-c", `COPY readings FROM STDIN`)
		require.False(t, ok)
		require.Contains(t, out, "read-only")
		require.Contains(t, out, "HINT:  MeterStore serves queries only")
		out, ok = psql.run(t, nil, "-c", `COPY (SELECT 1) TO '/tmp/x'`)
		require.False(t, ok)
		require.Contains(t, out, "COPY to a file is not allowed")
		for _, q := range []string{`PREPARE p AS SELECT 1`, `EXECUTE p`} {
			out, ok := psql.run(t, nil, "-c", q)
			require.False(t, ok, q)
			require.NotContains(t, out, "HINT", "%s: the tier-routing hint is for writes: %s", q, out)
		}
	})

	t.Run("explain", func(t *testing.T) {
		for _, q := range []string{`EXPLAIN SELECT count(*) FROM readings`, `EXPLAIN ANALYZE SELECT count(*) FROM readings`} {
			out := psql.ok(t, nil, "-c", q)
			require.Contains(t, out, "QUERY PLAN", q)
			require.Contains(t, out, "MeterStore plan", q)
			require.Contains(t, out, "provenance: watermark", q)
			require.NotContains(t, out, "HINT", q)
		}
		c := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeCacheStatement, nil)
		rows, err := c.Query(context.Background(), `EXPLAIN ANALYZE SELECT count(*) FROM readings WHERE tenant = $1`, "tenant01")
		require.NoError(t, err)
		var lines []string
		for rows.Next() {
			var l string
			require.NoError(t, rows.Scan(&l))
			lines = append(lines, l)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, "QUERY PLAN", string(rows.FieldDescriptions()[0].Name))
		require.Contains(t, strings.Join(lines, "\n"), "EXPLAIN ANALYZE")
	})

	t.Run("as PostgreSQL writes it", func(t *testing.T) {
		ms := servetest.PGConnect(t, addr, "meterstore", "", pgx.QueryExecModeSimpleProtocol, nil)
		ref := pgtest.Connect(t, pgtest.Database(t))
		query := `SELECT * FROM (VALUES (1, 'plain', 2.50::numeric(10,2)), (2, E'tab\there', NULL), (3, E'line\nbreak, "quoted"', 0.00::numeric(10,2)),
			(4, E'back\\slash', -1.25::numeric(10,2)), (5, '', 3.00::numeric(10,2)), (6, NULL, 4.00::numeric(10,2))) AS v(id, s, x) ORDER BY id`
		for _, opts := range []string{"", "WITH (FORMAT csv)", "WITH (FORMAT csv, HEADER)", "WITH CSV HEADER", "(FORMAT text, HEADER true)",
			"WITH (FORMAT csv, DELIMITER ';', NULL 'NULL')", "WITH DELIMITER '|' NULL ''"} {
			q := "COPY (" + query + ") TO STDOUT " + opts
			want, wantTag := copyOut(t, ref, q)
			got, gotTag := copyOut(t, ms, q)
			require.Equal(t, want, got, "%s: PostgreSQL wrote the first, msql serve the second", opts)
			require.Equal(t, wantTag, gotTag, opts)
		}
	})
}

func copyOut(t *testing.T, c *pgx.Conn, q string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	tag, err := c.PgConn().CopyTo(context.Background(), &b, q)
	require.NoError(t, err, q)
	return b.String(), tag.String()
}
