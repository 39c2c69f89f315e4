package main

import "strings"

// splitter accumulates input and cuts it into statements at semicolons that are
// outside quotes, comments and dollar-quoted strings. It only finds statement
// ends; what a statement is, DuckDB's parser decides.
type splitter struct {
	buf strings.Builder
}

// feed adds text and returns the statements it completed.
func (s *splitter) feed(text string) []string {
	s.buf.WriteString(text)
	src := s.buf.String()
	var out []string
	start := 0
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(src[i+1:], c)
			for j >= 0 && i+1+j+1 < len(src) && src[i+1+j+1] == c { // doubled quote escapes
				k := strings.IndexByte(src[i+1+j+2:], c)
				if k < 0 {
					j = -1
					break
				}
				j = j + 2 + k
			}
			if j < 0 {
				i = len(src)
				continue
			}
			i += j + 2
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = len(src)
				continue
			}
			i += j + 1
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				i = len(src)
				continue
			}
			i += j + 4
		case c == '$':
			tag, ok := dollarTag(src[i:])
			if !ok {
				i++
				continue
			}
			j := strings.Index(src[i+len(tag):], tag)
			if j < 0 {
				i = len(src)
				continue
			}
			i += len(tag) + j + len(tag)
		case c == ';':
			if stmt := strings.TrimSpace(src[start:i]); stmt != "" {
				out = append(out, stmt)
			}
			start = i + 1
			i++
		default:
			i++
		}
	}
	rest := src[start:]
	s.buf.Reset()
	s.buf.WriteString(rest)
	return out
}

// pending is the unfinished statement, if any.
func (s *splitter) pending() string { return strings.TrimSpace(s.buf.String()) }

func (s *splitter) reset() { s.buf.Reset() }

// dollarTag recognises $$ or $tag$ at the start of s.
func dollarTag(s string) (string, bool) {
	if len(s) < 2 {
		return "", false
	}
	for j := 1; j < len(s); j++ {
		c := s[j]
		if c == '$' {
			return s[:j+1], true
		}
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 1 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return "", false
}

// splitAll splits a whole script; a final statement without ";" counts too.
func splitAll(script string) []string {
	var s splitter
	out := s.feed(script)
	if p := s.pending(); p != "" && !onlyComments(p) {
		out = append(out, p)
	}
	return out
}

func onlyComments(s string) bool { return strings.TrimSpace(stripComments(s)) == "" }

func stripComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '-' && i+1 < len(s) && s[i+1] == '-' {
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				break
			}
			i += j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
