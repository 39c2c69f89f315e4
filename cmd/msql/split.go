package main

import (
	"strings"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// splitter accumulates input and cuts it into statements at semicolons that are
// outside quotes, comments and dollar-quoted strings (sqltext, the lexer the
// PostgreSQL wire server cuts with too). It only finds statement ends; what a
// statement is, DuckDB's parser decides.
type splitter struct {
	buf strings.Builder
}

// feed adds text and returns the statements it completed.
func (s *splitter) feed(text string) []string {
	s.buf.WriteString(text)
	stmts, rest, _ := sqltext.Cut(s.buf.String())
	var out []string
	for _, st := range stmts {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	s.buf.Reset()
	s.buf.WriteString(rest)
	return out
}

// pending is the unfinished statement, if any.
func (s *splitter) pending() string { return strings.TrimSpace(s.buf.String()) }

// splitAll splits a whole script; a final statement without ";" counts too.
func splitAll(script string) []string {
	var s splitter
	out := s.feed(script)
	if p := s.pending(); p != "" && !onlyComments(p) {
		out = append(out, p)
	}
	return out
}

func onlyComments(s string) bool { return sqltext.OnlyComments(s) }
