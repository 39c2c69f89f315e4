package engine

import "strings"

// stripExplain recognises a leading EXPLAIN or EXPLAIN ANALYZE, so `EXPLAIN
// SELECT …` shows the engine's split and EXPLAIN ANALYZE also runs the
// rewritten statement under DuckDB's profiler. Only the keywords are
// examined; the rest goes to DuckDB's parser.
func stripExplain(q string) (rest string, analyze bool) {
	rest, ok := cutKeyword(q, "EXPLAIN")
	if !ok {
		return q, false
	}
	if after, ok := cutKeyword(rest, "ANALYZE"); ok {
		return after, true
	}
	return rest, false
}

// IsExplain reports whether q begins with EXPLAIN (or EXPLAIN ANALYZE): a
// statement Explain answers with the engine's split and DuckDB's plan.
func IsExplain(q string) bool {
	_, ok := cutKeyword(q, "EXPLAIN")
	return ok
}

// cutKeyword returns q after a leading keyword followed by white space.
func cutKeyword(q, keyword string) (string, bool) {
	t := strings.TrimSpace(q)
	n := len(keyword)
	if len(t) > n && strings.EqualFold(t[:n], keyword) && (t[n] == ' ' || t[n] == '\n' || t[n] == '\t') {
		return strings.TrimSpace(t[n:]), true
	}
	return q, false
}
