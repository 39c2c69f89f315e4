package plan

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFiniteBoundsAnswerAsTheInfinities: every comparison of a time column
// with an infinity — each operator, either side, either sign, a literal, a
// DATE, a cast, a parameter, BETWEEN and IN with finite values beside it —
// is rendered with no infinity, and DuckDB answers the rendered statement as
// the original over "from" and balancing_day holding -infinity, a finite
// value, +infinity and NULL (the finite forms are exact for any value, not
// only for the stored ones).
func TestFiniteBoundsAnswerAsTheInfinities(t *testing.T) {
	s := testSession(t, nil)
	var terms []string
	for _, inf := range []string{`'-infinity'`, `'infinity'`, `DATE '-infinity'`, `'-infinity'::TIMESTAMPTZ + INTERVAL '1 day'`, `$1`, `$2`} {
		for _, op := range []string{"=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM", "IS NOT DISTINCT FROM"} {
			terms = append(terms, fmt.Sprintf(`"from" %s %s`, op, inf), fmt.Sprintf(`%s %s balancing_day`, inf, op))
		}
		terms = append(terms,
			fmt.Sprintf(`"from" BETWEEN %s AND '2025-01-01'`, inf), fmt.Sprintf(`balancing_day NOT BETWEEN '2025-01-01' AND %s`, inf),
			fmt.Sprintf(`"from" IN (%s, '2025-01-01')`, inf), fmt.Sprintf(`balancing_day NOT IN ('2025-01-01', %s)`, inf),
			fmt.Sprintf(`CASE WHEN NOT ("from" > %s OR "from" IS NULL) THEN 1 END`, inf))
	}
	items := make([]string, len(terms))
	for i, term := range terms {
		items[i] = fmt.Sprintf("%s AS t%d", term, i)
	}
	q := "SELECT " + strings.Join(items, ", ") + ` FROM readings`
	args := []any{"-infinity", "infinity"}
	pl, err := planThrough(t, s, q, "finite bounds", args...)
	require.NoError(t, err)
	ctx := context.Background()
	rendered, err := deserialize(ctx, pl.conn, pl.root)
	require.NoError(t, err)
	require.NotContains(t, strings.ToLower(rendered), "infinity", "no infinity is left to push into a scan")

	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	values := `(VALUES (TIMESTAMPTZ '-infinity', DATE '-infinity'), (TIMESTAMPTZ '2025-01-01 00:00:00+00', DATE '2025-01-01'),
		(TIMESTAMPTZ 'infinity', DATE 'infinity'), (NULL, NULL)) AS readings("from", balancing_day)`
	answer := func(q string) [][]string {
		t.Helper()
		rows, err := db.Query(strings.Replace(q, "FROM readings", "FROM "+values, 1), args...)
		require.NoError(t, err, q)
		defer rows.Close()
		var out [][]string
		for rows.Next() {
			vals := make([]any, len(terms))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = terms[i] + " → " + fmt.Sprint(v)
			}
			out = append(out, row)
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Equal(t, answer(q), answer(rendered))
}

// TestFiniteBoundsLeaveFiniteValues: a statement whose values cannot be
// infinite is not evaluated or changed, and one whose value only might be
// (a parameter bound to a finite instant) is evaluated and left as it is.
func TestFiniteBoundsLeaveFiniteValues(t *testing.T) {
	s := testSession(t, nil)
	for _, c := range []struct {
		q    string
		args []any
	}{
		{`SELECT count(*) FROM readings WHERE "from" >= '2025-01-01' AND balancing_day IN ('2025-01-01', DATE '2025-01-02')`, nil},
		{`SELECT count(*) FROM readings WHERE "from" >= $1 AND malo_id > 'infinity'`, []any{"2025-01-01"}},
	} {
		before, err := planThrough(t, s, c.q, "drop implied bounds", c.args...)
		require.NoError(t, err)
		want, err := deserialize(context.Background(), before.conn, before.root)
		require.NoError(t, err)
		after, err := planThrough(t, s, c.q, "finite bounds", c.args...)
		require.NoError(t, err)
		got, err := deserialize(context.Background(), after.conn, after.root)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// TestFiniteBoundsKeepColumnNames: a select-list expression without an alias
// is named by DuckDB after its text; its finite form keeps that name.
func TestFiniteBoundsKeepColumnNames(t *testing.T) {
	s := testSession(t, nil)
	q := `SELECT "from" > '-infinity', coalesce("from" <= 'infinity', false), "from" = '-infinity' AS named, count(*) FROM readings GROUP BY ALL ORDER BY "from" > '-infinity'`
	pl, err := planThrough(t, s, q, "finite bounds")
	require.NoError(t, err)
	rendered, err := deserialize(context.Background(), pl.conn, pl.root)
	require.NoError(t, err)
	require.NotContains(t, rendered, "'-infinity' AS", "the names are kept, not the values")
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	names := func(q string) []string {
		rows, err := db.Query(strings.Replace(q, "FROM readings", `FROM (VALUES (TIMESTAMPTZ '2025-01-01 00:00:00+00')) AS readings("from")`, 1))
		require.NoError(t, err, q)
		defer rows.Close()
		cols, err := rows.Columns()
		require.NoError(t, err)
		return cols
	}
	require.Equal(t, names(q), names(rendered))
}
