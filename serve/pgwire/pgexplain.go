package pgwire

import (
	"context"
	"strings"
)

// explainColumn is the one column PostgreSQL answers EXPLAIN with.
var explainColumn = textCol("QUERY PLAN")

// explainPrefix splits EXPLAIN [ANALYZE] off a statement: the keywords as
// written and the statement explained; ok is false for any other statement.
func explainPrefix(q string) (prefix, rest string, ok bool) {
	toks := tokenize(q)
	if len(toks) < 2 || !toks[0].is("explain") {
		return "", "", false
	}
	i := 1
	if toks[1].is("analyze") || toks[1].is("analyse") {
		i = 2
	}
	if i >= len(toks) {
		return "", "", false
	}
	return strings.ToUpper(strings.Join(strings.Fields(q[:toks[i].start]), " ")), q[toks[i].start:], true
}

// explain answers EXPLAIN [ANALYZE] as PostgreSQL does — one text column,
// QUERY PLAN, a row per line — with the engine's account: how the statement is
// split across the tiers, and DuckDB's plan (run and profiled for ANALYZE).
// The statement explained is translated like any other.
func (sess *pgSession) explain(ctx context.Context, p *pgPortal, prefix, rest string) error {
	tq, err := sess.translate(ctx, rest)
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancelCause(ctx)
	sess.startStatement(stop)
	defer func() {
		stop(nil)
		sess.mu.Lock()
		sess.cancelStmt = nil
		sess.mu.Unlock()
	}()
	text, err := sess.eng.Explain(sctx, prefix+" "+tq, p.args...)
	if err != nil {
		return cancelCause(sctx, ctx, err)
	}
	res := &staticResult{cols: []pgColumn{explainColumn}, tag: "EXPLAIN"}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		res.rows = append(res.rows, []any{line})
	}
	p.static, p.cols = res, res.cols
	return nil
}
