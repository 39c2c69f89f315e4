package hot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
)

// TestPartialsResolvedPartitionByPartition: the partials of a hot window
// spread over several day partitions and two scan requests are those of the
// highest version of each reading, and PostgreSQL resolves them one
// partition at a time — every anti join of the plan reads a single
// partition on both sides, instead of one join over the whole window.
func TestPartialsResolvedPartitionByPartition(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	want := map[string]decimal.Decimal{}
	counts := map[string]int{}
	for d := range 4 {
		day := day10.Add(time.Duration(d) * 24 * time.Hour)
		for _, malo := range []string{maloA, maloB, maloC} {
			first := quarterHours(malo, obisImport, day, 96, 20260310000001)
			corrected := quarterHours(malo, obisImport, day, 24*(d+1), 20260310000002)
			for i := range corrected {
				corrected[i].Value = corrected[i].Value.Add(decimal.NewFromInt(10))
			}
			_, err := st.Write(ctx, append(first, corrected...))
			require.NoError(t, err)
			for i, r := range first {
				if i < len(corrected) {
					r = corrected[i]
				}
				want[malo] = want[malo].Add(r.Value)
				counts[malo]++
			}
		}
	}
	_, err := st.Pool().Exec(ctx, "ANALYZE readings_versions")
	require.NoError(t, err)
	split := day10.Add(48 * time.Hour)
	reqs := []hot.ScanRequest{{From: day10, To: split}, {From: split}}
	partials := []hot.Partial{{Kind: "group", Column: "malo_id", Name: "malo_id"}, {Kind: "sum", Column: "value", Name: "value"}, {Kind: "count", Name: "n"}}
	q, err := st.PartialsQuery(reqs, partials, true)
	require.NoError(t, err)

	rows, err := st.TextRows(ctx, q)
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range rows {
		got[*r[0]] = *r[1] + " n=" + *r[2]
	}
	expected := map[string]string{}
	for malo, sum := range want {
		expected[malo] = sum.StringFixed(6) + fmt.Sprintf(" n=%d", counts[malo])
	}
	require.Equal(t, expected, got, q)

	plan, err := st.TextRows(ctx, "EXPLAIN (FORMAT JSON) "+q)
	require.NoError(t, err)
	var doc []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal([]byte(*plan[0][0]), &doc))
	joins := doc[0].Plan.antiJoins()
	require.GreaterOrEqual(t, len(joins), 4, "one anti join per day partition:\n%s", *plan[0][0])
	for _, j := range joins {
		require.Len(t, j.relations(map[string]bool{}), 1, "an anti join over more than one partition:\n%s", *plan[0][0])
	}
}

// planNode is a node of PostgreSQL's EXPLAIN (FORMAT JSON).
type planNode struct {
	JoinType string     `json:"Join Type"`
	Relation string     `json:"Relation Name"`
	Plans    []planNode `json:"Plans"`
}

// antiJoins are the anti join nodes at or under n.
func (n planNode) antiJoins() []planNode {
	var out []planNode
	if n.JoinType == "Anti" {
		out = append(out, n)
	}
	for _, c := range n.Plans {
		out = append(out, c.antiJoins()...)
	}
	return out
}

// relations adds the tables read at or under n to seen.
func (n planNode) relations(seen map[string]bool) map[string]bool {
	if n.Relation != "" {
		seen[n.Relation] = true
	}
	for _, c := range n.Plans {
		c.relations(seen)
	}
	return seen
}

// TestTextRowsReadOnlyAndItsSettingsEndWithIt: TextRows' query runs in a
// read-only transaction with enable_partitionwise_join on, NULL comes back
// as nil, a failing query leaves nothing behind, and the setting does not
// outlive the query on the connection it ran on.
func TestTextRowsReadOnlyAndItsSettingsEndWithIt(t *testing.T) {
	ctx := context.Background()
	cfg := openPool(t).Config()
	cfg.MaxConns = 1 // the queries after TextRows run on its connection
	single, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(single.Close)
	st := storeOn(t, single, meterstore.TableSpec{Name: "readings_versions"})

	rows, err := st.TextRows(ctx, "SELECT current_setting('enable_partitionwise_join'), current_setting('transaction_read_only'), NULL::text")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, "on", *rows[0][0])
	require.Equal(t, "on", *rows[0][1])
	require.Nil(t, rows[0][2])

	_, err = st.TextRows(ctx, "CREATE TABLE textrows_write (x int)")
	var pg *pgconn.PgError
	require.ErrorAs(t, err, &pg)
	require.Equal(t, "25006", pg.Code, "read-only transaction")

	var setting string
	require.NoError(t, single.QueryRow(ctx, "SELECT current_setting('enable_partitionwise_join')").Scan(&setting))
	require.Equal(t, "off", setting, "the same connection after TextRows")
	var n int
	require.NoError(t, single.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'textrows_write'").Scan(&n))
	require.Zero(t, n)
}
