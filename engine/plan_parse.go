package engine

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// node is one object of DuckDB's serialized parse tree (json_serialize_sql).
type node = map[string]any

// ErrNotAQuery is returned for anything but a single SELECT: the session runs
// queries only, and the statement is refused before anything is prepared (a
// multi-statement string handed to prepare would execute all but its last part).
var ErrNotAQuery = errors.New("only a single SELECT statement (or WITH … SELECT) may run here")

// ParseError is DuckDB's own parser rejecting the statement.
type ParseError struct{ Message string }

func (e *ParseError) Error() string { return "parse: " + e.Message }

// serialize parses q with DuckDB's parser and returns its tree. It refuses
// anything that is not exactly one SELECT.
func serialize(ctx context.Context, conn *sql.Conn, q string) (node, error) {
	var out string
	if err := conn.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", q).Scan(&out); err != nil {
		return nil, fmt.Errorf("serialize statement: %w", err)
	}
	root, err := decodeJSON(out)
	if err != nil {
		return nil, err
	}
	if isErr, _ := root["error"].(bool); isErr {
		msg, _ := root["error_message"].(string)
		typ, _ := root["error_type"].(string)
		if typ == "not implemented" || strings.Contains(msg, "Only SELECT") {
			return nil, fmt.Errorf("%w: %s", ErrNotAQuery, msg)
		}
		return nil, &ParseError{Message: msg}
	}
	stmts, _ := root["statements"].([]any)
	switch {
	case len(stmts) == 0:
		return nil, fmt.Errorf("%w: the statement is empty", ErrNotAQuery)
	case len(stmts) > 1:
		return nil, fmt.Errorf("%w: %d statements were given; send them one at a time", ErrNotAQuery, len(stmts))
	}
	return root, nil
}

// decodeJSON keeps numbers exact: query_location is UINT64_MAX, which float64 corrupts.
func decodeJSON(s string) (node, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var root node
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("decode parse tree: %w", err)
	}
	return root, nil
}

// deserialize turns a (rewritten) tree back into SQL text.
func deserialize(ctx context.Context, conn *sql.Conn, root node) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return "", fmt.Errorf("encode parse tree: %w", err)
	}
	var out string
	if err := conn.QueryRowContext(ctx, "SELECT json_deserialize_sql(?::JSON)", buf.String()).Scan(&out); err != nil {
		return "", fmt.Errorf("deserialize rewritten statement: %w", err)
	}
	return out, nil
}

// statementNode returns statements[0].node of a serialized tree.
func statementNode(root node) node {
	stmts, _ := root["statements"].([]any)
	if len(stmts) == 0 {
		return nil
	}
	st, _ := stmts[0].(node)
	n, _ := st["node"].(node)
	return n
}

// subqueryOf serializes sql and returns it as a parse-tree "subquery" object
// ({"node": …, "named_param_map": []}), ready to hang under a SUBQUERY table ref.
func subqueryOf(ctx context.Context, conn *sql.Conn, q string) (node, error) {
	root, err := serialize(ctx, conn, q)
	if err != nil {
		return nil, fmt.Errorf("engine-built subquery %q: %w", q, err)
	}
	stmts := root["statements"].([]any)
	st := stmts[0].(node)
	return node{"node": st["node"], "named_param_map": []any{}}, nil
}

// stripExplain recognises a leading EXPLAIN keyword, so `EXPLAIN SELECT …` shows
// the engine's split. Only the keyword is examined; the rest goes to DuckDB's parser.
func stripExplain(q string) (string, bool) {
	t := strings.TrimSpace(q)
	if len(t) > 8 && strings.EqualFold(t[:7], "EXPLAIN") && (t[7] == ' ' || t[7] == '\n' || t[7] == '\t') {
		rest := strings.TrimSpace(t[8:])
		if len(rest) >= 7 && strings.EqualFold(rest[:7], "ANALYZE") {
			return q, false
		}
		return rest, true
	}
	return q, false
}
