package main

import (
	"context"
	"errors"
	"fmt"

	"meterstore/engine"
)

// engineSession runs statements through the engine: queries only, split across
// the tiers, with provenance.
type engineSession struct {
	eng *engine.Engine
	d   *deployment
}

func (s *engineSession) run(ctx context.Context, stmt string) (table, string, error) {
	if q, ok := explainOf(stmt); ok {
		text, err := s.eng.Explain(ctx, q)
		if err != nil {
			return table{}, "", err
		}
		return table{columns: []string{"explain"}, rows: lines(text)}, "", nil
	}
	res, err := s.eng.Query(ctx, stmt)
	if err != nil {
		if errors.Is(err, engine.ErrNotAQuery) {
			return table{}, "", withHint(err, "statements other than queries are refused here; use --scratch for ad-hoc DuckDB work, or .export to write files")
		}
		return table{}, "", err
	}
	return table{columns: res.Columns, rows: res.Rows}, res.Provenance.String(), nil
}

func explainOf(stmt string) (string, bool) {
	if len(stmt) > 8 && (stmt[:8] == "EXPLAIN " || stmt[:8] == "explain ") {
		return stmt[8:], true
	}
	return "", false
}

func lines(s string) [][]any {
	var out [][]any
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			if i > start || i < len(s) {
				out = append(out, []any{s[start:i]})
			}
			start = i + 1
		}
	}
	return out
}

var _ = fmt.Sprint
