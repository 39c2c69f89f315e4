package plan

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// ErrNotAQuery is returned for anything but a single SELECT: the session runs
// queries only, and the statement is refused before anything is prepared (a
// multi-statement string handed to prepare would execute all but its last part).
var ErrNotAQuery = errors.New("only a single SELECT statement (or WITH … SELECT) may run here")

// ErrUnknownRelation is a statement naming a relation the session does not
// serve (a server answers it as PostgreSQL does a missing relation, 42P01).
var ErrUnknownRelation = fmt.Errorf("%w: unknown relation", ErrNotAQuery)

// ParseError is DuckDB's own parser rejecting the statement.
type ParseError struct{ Message string }

func (e *ParseError) Error() string { return "parse: " + e.Message }

// serialize parses q with DuckDB's parser and returns its tree. It refuses
// anything that is not exactly one SELECT.
func serialize(ctx context.Context, conn *sql.Conn, q string) (*sqltree.Root, error) {
	var out string
	if err := conn.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", q).Scan(&out); err != nil {
		return nil, fmt.Errorf("serialize statement: %w", err)
	}
	root, err := sqltree.Decode(out)
	if err != nil {
		return nil, err
	}
	if root.Error {
		if strings.Contains(root.ErrorMessage, "Only SELECT") {
			return nil, refuseStatement(q)
		}
		if root.ErrorType == "not implemented" {
			// A construct of the query DuckDB's parser does not implement
			// (BETWEEN SYMMETRIC): the statement is a query, DuckDB cannot run it.
			return nil, parseError(q, "not implemented by DuckDB's parser: "+root.ErrorMessage+
				" — a construct of this query DuckDB does not support (BETWEEN SYMMETRIC, for one: write x BETWEEN least(a, b) AND greatest(a, b))", -1)
		}
		position := -1
		if p, ok := root.Rest["position"].(string); ok {
			if n, err := strconv.Atoi(p); err == nil {
				position = n
			}
		}
		return nil, parseError(q, root.ErrorMessage, position)
	}
	switch n := len(root.Statements); {
	case n == 0:
		return nil, fmt.Errorf("%w: the statement is empty", ErrNotAQuery)
	case n > 1:
		return nil, fmt.Errorf("%w: %d statements were given; send them one at a time", ErrNotAQuery, n)
	}
	return root, nil
}

// deserialize turns a (rewritten) tree back into SQL text.
func deserialize(ctx context.Context, conn *sql.Conn, root *sqltree.Root) (string, error) {
	tree, err := sqltree.Encode(root)
	if err != nil {
		return "", err
	}
	var out string
	if err := conn.QueryRowContext(ctx, "SELECT json_deserialize_sql(?::JSON)", tree).Scan(&out); err != nil {
		return "", fmt.Errorf("deserialize rewritten statement: %w", err)
	}
	return out, nil
}

// subqueryOf serializes an engine-built query, to hang under a subquery reference.
func subqueryOf(ctx context.Context, conn *sql.Conn, q string) (*sqltree.Statement, error) {
	root, err := serialize(ctx, conn, q)
	if err != nil {
		return nil, fmt.Errorf("engine-built subquery %q: %w", q, err)
	}
	st := root.Statements[0]
	st.Rest = sqltree.Fields{"named_param_map": []any{}}
	return st, nil
}

// parameterNames are the parameters of st as DuckDB's parser names them
// (named_param_map): "malo" for $malo, "1" for $1 and the first ?, in the
// order of their indexes.
func parameterNames(st *sqltree.Statement) []string {
	list, _ := st.Rest["named_param_map"].([]any)
	type param struct {
		name  string
		index int64
	}
	ps := make([]param, 0, len(list))
	for _, e := range list {
		o, ok := e.(*sqltree.Object)
		if !ok {
			continue
		}
		name, _ := o.Get("key").(string)
		n, _ := o.Get("value").(json.Number)
		i, _ := n.Int64()
		ps = append(ps, param{name, i})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].index < ps[j].index })
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name
	}
	return names
}
