package pgwire

import (
	"strings"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// splitStatements cuts a simple-query string at top-level semicolons.
// Statements holding nothing but comments are dropped.
func splitStatements(q string) []string {
	stmts, rest, _ := sqltext.Cut(q)
	var out []string
	for _, s := range append(stmts, rest) {
		if !sqltext.OnlyComments(s) {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// codeOnly is the statement with every literal, identifier and comment blanked:
// what keyword checks look at.
func codeOnly(q string) string {
	var b strings.Builder
	for _, s := range sqltext.Lex(q) {
		if s.Code {
			b.WriteString(s.Text)
		} else {
			b.WriteString(" _ ")
		}
	}
	return b.String()
}

// firstWord is the statement's first keyword, upper-cased.
func firstWord(q string) string {
	t := strings.TrimSpace(sqltext.StripComments(q))
	for len(t) > 0 && t[0] == '(' {
		t = strings.TrimSpace(t[1:])
	}
	end := strings.IndexFunc(t, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
	})
	if end < 0 {
		end = len(t)
	}
	return strings.ToUpper(t[:end])
}

// tokKind classifies a token of tokenize.
type tokKind uint8

const (
	tokWord   tokKind = iota // keyword or bare identifier
	tokQuoted                // "quoted identifier"
	tokString                // '…', E'…' or $tag$…$tag$
	tokNumber
	tokParam // $1
	tokOp    // an operator: ::, ~, !~, ~*, <>, =, …
	tokPunct // ( ) , . [ ] ;
)

// token is one lexical token of a statement; start and end index the
// statement's text, so a rewrite keeps everything between tokens (spacing,
// comments) as the client wrote it.
type token struct {
	kind       tokKind
	text       string
	start, end int
}

// word is the token's identifier in lower case (a bare word folds, as
// PostgreSQL folds it), or its exact name if quoted; "" for anything else.
func (t token) word() string {
	switch t.kind {
	case tokWord:
		return strings.ToLower(t.text)
	case tokQuoted:
		return strings.ReplaceAll(t.text[1:len(t.text)-1], `""`, `"`)
	}
	return ""
}

// is reports whether the token is the bare keyword kw (lower case).
func (t token) is(kw string) bool { return t.kind == tokWord && strings.EqualFold(t.text, kw) }

// stringValue is a string literal's value.
func (t token) stringValue() string {
	s := t.text
	switch {
	case strings.HasPrefix(s, "$"):
		i := strings.IndexByte(s[1:], '$') + 2
		return s[i : len(s)-i]
	case s[0] == 'e' || s[0] == 'E':
		return strings.ReplaceAll(strings.ReplaceAll(s[2:len(s)-1], `\'`, `'`), "''", "'")
	}
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
}

const opChars = "+-*/<>=~!@#%^&|`?:"

// tokenize cuts a statement into tokens, dropping spacing and comments. Like
// sqltext.Lex it never fails.
func tokenize(q string) []token {
	var out []token
	pos := 0
	for _, s := range sqltext.Lex(q) {
		start := pos
		pos += len(s.Text)
		if !s.Code {
			switch s.Text[0] {
			case '"':
				out = append(out, token{kind: tokQuoted, text: s.Text, start: start, end: pos})
			case '\'', '$':
				t := token{kind: tokString, text: s.Text, start: start, end: pos}
				// An E'…' literal: lex left the E at the end of the code before.
				if n := len(out); s.Text[0] == '\'' && n > 0 && out[n-1].end == start && strings.EqualFold(out[n-1].text, "e") {
					t.start, t.text = out[n-1].start, q[out[n-1].start:pos]
					out = out[:n-1]
				}
				out = append(out, t)
			}
			continue
		}
		t := s.Text
		for i := 0; i < len(t); {
			c := t[i]
			j := i + 1
			kind := tokPunct
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
				i++
				continue
			case sqltext.IdentStart(c):
				// PostgreSQL continues a word with $ too: a$1 is one word.
				for j < len(t) && (sqltext.IdentByte(t[j]) || t[j] == '$') {
					j++
				}
				kind = tokWord
			case c >= '0' && c <= '9':
				for j < len(t) && (t[j] >= '0' && t[j] <= '9' || t[j] == '.' || t[j] == 'e' || t[j] == 'E') {
					j++
				}
				kind = tokNumber
			case c == '$':
				for j < len(t) && t[j] >= '0' && t[j] <= '9' {
					j++
				}
				kind = tokParam
			case strings.IndexByte(opChars, c) >= 0:
				for j < len(t) && strings.IndexByte(opChars, t[j]) >= 0 {
					j++
				}
				j = i + operatorLen(t[i:j])
				kind = tokOp
			}
			out = append(out, token{kind: kind, text: t[i:j], start: start + i, end: start + j})
			i = j
		}
	}
	return out
}

// operatorLen is the length of the operator PostgreSQL's lexer reads from a
// run of operator characters: a name of several characters does not end in +
// or - unless it holds one of ~ ! @ # % ^ & | ` ?, so 7/-2 is 7 / -2 and
// 2*-1 is 2 * -1.
func operatorLen(run string) int {
	n := len(run)
	if strings.ContainsAny(run, "~!@#%^&|`?") {
		return n
	}
	for n > 1 && (run[n-1] == '+' || run[n-1] == '-') {
		n--
	}
	return n
}
