package plan

import (
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// ErrWrite is a statement that would change data or the schema: every
// relation a session serves is read-only (rows enter through the store's
// write path).
var ErrWrite = fmt.Errorf("%w: a write", ErrNotAQuery)

// ErrFileFunction is a table function that reads files, other databases or
// the engine's internals, which a query session never does.
var ErrFileFunction = fmt.Errorf("%w: table function refused", ErrNotAQuery)

// writeKeywords open a statement that writes data or the schema.
var writeKeywords = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "UPSERT": true, "COPY": true,
	"CREATE": true, "DROP": true, "ALTER": true, "TRUNCATE": true, "VACUUM": true, "CHECKPOINT": true,
	"IMPORT": true, "EXPORT": true, "COMMENT": true,
}

// refuseStatement names what DuckDB's serializer refused and why, in place of
// its internal phrase ("Only SELECT statements can be serialized to json!").
func refuseStatement(q string) error {
	kw := firstKeyword(q)
	switch {
	case writeKeywords[kw]:
		return fmt.Errorf("%w: %s changes data, and the relations here are read-only", ErrWrite, kw)
	case kw != "":
		return fmt.Errorf("%w: %s is not a query", ErrNotAQuery, kw)
	}
	return fmt.Errorf("%w: the statement is not a query", ErrNotAQuery)
}

// firstKeyword is the statement's first word, upper-cased ("" when it opens
// with something else).
func firstKeyword(q string) string {
	code := strings.TrimLeft(sqltext.StripComments(q), " \t\r\n(")
	end := strings.IndexFunc(code, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
	})
	if end < 0 {
		end = len(code)
	}
	return strings.ToUpper(code[:end])
}

// closestName is the candidate a misspelt name most likely meant: at most two
// edits away, or "" when none is.
func closestName(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
