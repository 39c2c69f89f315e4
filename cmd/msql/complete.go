package main

import (
	"context"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/meterstore/meterstore/udf"
)

// completer offers dot-commands at the start of a line, else SQL keywords,
// relations (readings, readings_versions, system.*), columns and the metering
// functions. Candidates are computed once per shell, on first use.
type completer struct {
	sh    *shell
	once  sync.Once
	words []string
}

func newCompleter(sh *shell) *completer { return &completer{sh: sh} }

// fallbackKeywords is used when DuckDB's keyword list cannot be read.
var fallbackKeywords = []string{"SELECT", "FROM", "WHERE", "GROUP", "BY", "ORDER", "HAVING", "LIMIT",
	"WITH", "AS", "AND", "OR", "NOT", "IN", "BETWEEN", "JOIN", "LEFT", "ON", "UNION", "ALL", "DISTINCT",
	"CASE", "WHEN", "THEN", "ELSE", "END", "NULL", "IS", "ASC", "DESC", "EXPLAIN", "OFFSET", "OVER", "PARTITION"}

func (c *completer) load() {
	words := map[string]bool{}
	add := func(ws ...string) {
		for _, w := range ws {
			if w != "" {
				words[w] = true
			}
		}
	}
	add(fallbackKeywords...)
	add(udf.Names()...)
	ctx := context.Background()
	if db := c.sh.duckDB(); db != nil {
		if rows, err := db.QueryContext(ctx, "SELECT upper(keyword_name) FROM duckdb_keywords() WHERE keyword_category IN ('reserved', 'unreserved')"); err == nil {
			for rows.Next() {
				var k string
				if rows.Scan(&k) == nil {
					add(k)
				}
			}
			rows.Close()
		}
		if rows, err := db.QueryContext(ctx, "SELECT DISTINCT schema_name || '.' || table_name FROM duckdb_tables() WHERE schema_name = 'system' UNION SELECT DISTINCT schema_name || '.' || view_name FROM duckdb_views() WHERE schema_name = 'system'"); err == nil {
			for rows.Next() {
				var k string
				if rows.Scan(&k) == nil {
					add(k)
				}
			}
			rows.Close()
		}
	}
	if es := c.sh.es; es != nil {
		for _, t := range es.eng.Tables() {
			add(t.Name(), t.ResolvedName())
			add(t.ColumnNames()...)
		}
	}
	for w := range words {
		c.words = append(c.words, w)
	}
	sort.Strings(c.words)
}

// Do implements readline.AutoCompleter: the candidates' remainders after the
// word before the cursor, and that word's length.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	c.once.Do(c.load)
	head := string(line[:pos])
	trimmed := strings.TrimLeft(head, " \t")
	if strings.HasPrefix(trimmed, ".") && !strings.ContainsAny(trimmed, " \t") {
		return matches(dotNames(), trimmed, false), len([]rune(trimmed))
	}
	start := pos
	for start > 0 && (unicode.IsLetter(line[start-1]) || unicode.IsDigit(line[start-1]) || line[start-1] == '_' || line[start-1] == '.') {
		start--
	}
	word := string(line[start:pos])
	if word == "" {
		return nil, 0
	}
	return matches(c.words, word, true), len([]rune(word))
}

// matches returns the remainders of the candidates that start with prefix
// (case-insensitively with fold, keeping the case the user typed in).
func matches(cands []string, prefix string, fold bool) [][]rune {
	var out [][]rune
	lower := prefix == strings.ToLower(prefix)
	for _, c := range cands {
		if len(c) < len(prefix) {
			continue
		}
		if fold && strings.EqualFold(c[:len(prefix)], prefix) || !fold && strings.HasPrefix(c, prefix) {
			rest := c[len(prefix):]
			if fold && lower && c == strings.ToUpper(c) { // a keyword, typed in lower case
				rest = strings.ToLower(rest)
			}
			out = append(out, []rune(rest))
		}
	}
	return out
}
