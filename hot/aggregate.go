package hot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/meterstore/meterstore"
)

// Partial is one output column of an aggregate the hot tier computes over
// its rows: a column grouped by (Kind "group"), an aggregate of a column
// ("sum", "min", "max"), or the rows counted ("count", no Column). Name is
// the output column's name.
type Partial struct {
	Kind, Column, Name string
}

// PartialsQuery is one SELECT that groups the rows reqs select — resolved
// to the highest version per resolution key first when resolved — and
// computes partials over each group. Every output column is text in a form
// DuckDB casts back exactly (a day as YYYY-MM-DD, a numeric in plain
// notation), its values written into the query as Query writes them, for a
// reader that cannot bind parameters. Only text, date and numeric columns
// are taken: no other type's text is the same in both databases whatever
// the session says.
//
// Resolution is an anti join — a row is kept unless the rows its request
// selects hold its resolution key at a higher version — which keeps what
// resolution.sql's ROW_NUMBER() = 1 keeps: the primary key (merge key,
// version) makes every key column NOT NULL, so = matches as PARTITION BY
// groups, and no two rows of a key share a version, so the highest is the
// one row ranked first. Each request is resolved on its own: a request is
// one table (the parent or a detached partition) over a "from" range and
// key equalities, and "from" is in the key, so every version of a key a
// request selects is in that request. So each anti join joins one
// partitioned table with itself on its partition key, which TextRows lets
// PostgreSQL run partition by partition; ranking every row sorts them all.
func (s *Store) PartialsQuery(reqs []ScanRequest, partials []Partial, resolved bool) (string, error) {
	if len(reqs) == 0 || len(partials) == 0 {
		return "", fmt.Errorf("partials of %s: no scan or no column to compute", s.cfg.Name())
	}
	types := map[string]meterstore.ColumnType{}
	for _, c := range s.cfg.Columns() {
		types[c.Name] = c.Type
	}
	var list, groups, read []string
	for _, p := range partials {
		expr, err := partialExpr(p, types)
		if err != nil {
			return "", fmt.Errorf("partials of %s: %w", s.cfg.Name(), err)
		}
		list = append(list, expr+" AS "+meterstore.QuoteIdent(p.Name))
		if p.Kind == "group" {
			groups = append(groups, meterstore.QuoteIdent(p.Column))
		}
		if p.Column != "" && !slices.Contains(read, p.Column) {
			read = append(read, p.Column)
		}
	}
	key := append(s.cfg.ResolutionKey(), "version")
	if resolved {
		for _, k := range key {
			if !slices.Contains(read, k) {
				read = append(read, k)
			}
		}
	}
	parts := make([]string, len(reqs))
	for i, req := range reqs {
		q, err := s.partialsRows(req, read, key, resolved)
		if err != nil {
			return "", err
		}
		parts[i] = q
	}
	q := fmt.Sprintf("SELECT %s FROM (%s) AS _meterstore_row", strings.Join(list, ", "), strings.Join(parts, " UNION ALL "))
	if len(groups) > 0 {
		q += " GROUP BY " + strings.Join(groups, ", ")
	}
	return q, nil
}

// partialsRows is the rows req selects, columns read, resolved when
// resolved: a row is left out where the rows req selects hold its key (key
// without its last column, "version") at a higher version.
func (s *Store) partialsRows(req ScanRequest, read, key []string, resolved bool) (string, error) {
	req.Columns = read
	rows, err := s.Query(req)
	if err != nil || !resolved {
		return rows, err
	}
	req.Columns = key
	newer, err := s.Query(req)
	if err != nil {
		return "", err
	}
	on := make([]string, 0, len(key))
	for _, k := range key[:len(key)-1] {
		on = append(on, fmt.Sprintf("_meterstore_newer.%[1]s = _meterstore_row.%[1]s", meterstore.QuoteIdent(k)))
	}
	on = append(on, `_meterstore_newer."version" > _meterstore_row."version"`)
	return fmt.Sprintf("SELECT * FROM (%s) AS _meterstore_row WHERE NOT EXISTS (SELECT 1 FROM (%s) AS _meterstore_newer WHERE %s)",
		rows, newer, strings.Join(on, " AND ")), nil
}

// partialExpr is p's output column as text.
func partialExpr(p Partial, types map[string]meterstore.ColumnType) (string, error) {
	if p.Kind == "count" {
		return "count(*)::text", nil
	}
	t, ok := types[p.Column]
	if !ok {
		return "", fmt.Errorf("unknown column %q", p.Column)
	}
	col := meterstore.QuoteIdent(p.Column)
	switch p.Kind {
	case "group":
	case "sum", "min", "max":
		if t != meterstore.TypeDecimal18_6 && t != meterstore.TypeDecimal20_0 {
			return "", fmt.Errorf("%s(%s): only numeric columns are aggregated here, %s is %s", p.Kind, p.Column, p.Column, t.PostgresType())
		}
		col = p.Kind + "(" + col + ")"
	default:
		return "", fmt.Errorf("unknown partial %q of %q", p.Kind, p.Column)
	}
	switch t {
	case meterstore.TypeDate:
		return "to_char(" + col + ", 'YYYY-MM-DD')", nil
	case meterstore.TypeText, meterstore.TypeDecimal18_6, meterstore.TypeDecimal20_0:
		return col + "::text", nil
	}
	return "", fmt.Errorf("%s: a %s column is not grouped here", p.Column, t.PostgresType())
}

// TextRows runs q, a query of text columns such as PartialsQuery writes,
// and returns its rows (nil for NULL). A partition dropped by an archival
// while q ran fails with ErrPartitionDetached, so the statement is run again.
//
// q runs in a read-only transaction with enable_partitionwise_join on
// (SET LOCAL: nothing outlives it, and a transaction-pooling proxy keeps it
// to this query): PartialsQuery's anti join of the hot table with itself is
// then one small hash join per day's partition instead of one over the
// whole hot window, which sorted or hashed every row of it at once. The
// settings and q go as one simple-protocol message (textRowsPrelude), one
// round trip where BEGIN, SET LOCAL, the query and COMMIT were four.
func (s *Store) TextRows(ctx context.Context, q string) ([][]*string, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, textRowsError(err)
	}
	defer c.Release()
	out, err := lastResultText(c.Conn().PgConn().Exec(ctx, textRowsPrelude+q))
	if err != nil {
		return nil, textRowsError(err)
	}
	return out, nil
}

// textRowsPrelude precedes TextRows' query in its message. PostgreSQL runs
// the statements of one simple-protocol message as one implicit transaction
// block, so both settings apply to the query and end with it — and the
// whole of it is rolled back if any statement fails.
const textRowsPrelude = "SET TRANSACTION READ ONLY; SET LOCAL enable_partitionwise_join = on; "

// lastResultText reads every result of mrr and returns the rows of the last
// one as text (nil for NULL).
func lastResultText(mrr *pgconn.MultiResultReader) ([][]*string, error) {
	var out [][]*string
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		out = nil
		for rr.NextRow() {
			vals := rr.Values()
			row := make([]*string, len(vals))
			for i, v := range vals {
				if v != nil {
					text := string(v)
					row[i] = &text
				}
			}
			out = append(out, row)
		}
		if _, err := rr.Close(); err != nil {
			mrr.Close()
			return nil, err
		}
	}
	return out, mrr.Close()
}

func textRowsError(err error) error {
	if droppedMeanwhile(err) {
		return fmt.Errorf("hot partials: a partition was dropped during the statement (archived): %w: %w", ErrPartitionDetached, err)
	}
	return fmt.Errorf("hot partials: %w", err)
}
