package plan

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// CompleteHotLines writes into each hot half's EXPLAIN line the SQL
// PostgreSQL receives, with the columns DuckDB's plan of the rewritten
// statement reads from the half's table function: a hot scan asks PostgreSQL
// only for those. DuckDB's plan does not say which reference a scan node
// belongs to, so where a statement reads several hot halves through one
// function, each line names the columns of them all; a half DuckDB's plan does
// not read at all says so.
func (p *Plan) CompleteHotLines(ctx context.Context, conn *sql.Conn, args []any) error {
	if len(p.hotLines) == 0 {
		return nil
	}
	read, err := functionProjections(ctx, conn, p.SQL, args)
	if err != nil {
		return err
	}
	for _, l := range p.hotLines {
		path := l.ref.hot.path
		received := "nothing (DuckDB's plan does not scan the hot tier)"
		if cols, ok := read[strings.ToUpper(path.Name())]; ok {
			received = path.explain(l.ref, cols)
		}
		p.Explain[l.at] = l.ref.hotExplain(received)
	}
	return nil
}

// functionProjections is, per table function DuckDB's physical plan of q
// scans, the columns it reads from it (EXPLAIN (FORMAT json)'s Projections of
// the scan nodes whose Function is that name).
func functionProjections(ctx context.Context, conn *sql.Conn, q string, args []any) (map[string][]string, error) {
	var kind, text string
	if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT json) "+q, args...).Scan(&kind, &text); err != nil {
		return nil, err
	}
	var nodes []planNode
	if err := json.Unmarshal([]byte(text), &nodes); err != nil {
		return nil, fmt.Errorf("read DuckDB's plan: %w", err)
	}
	out := map[string][]string{}
	var walk func([]planNode)
	walk = func(ns []planNode) {
		for _, n := range ns {
			if fn, ok := n.Extra["Function"].(string); ok {
				cols := out[fn]
				if cols == nil {
					cols = []string{}
				}
				for _, c := range projections(n.Extra["Projections"]) {
					if !slices.Contains(cols, c) {
						cols = append(cols, c)
					}
				}
				out[fn] = cols
			}
			walk(n.Children)
		}
	}
	walk(nodes)
	return out, nil
}

type planNode struct {
	Extra    map[string]any `json:"extra_info"`
	Children []planNode     `json:"children"`
}

// projections reads a Projections entry: one name, or a list of them.
func projections(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
