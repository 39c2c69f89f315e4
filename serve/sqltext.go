package serve

import (
	"strconv"
	"strings"
)

// segment is a piece of SQL text: code, or something whose contents must not be
// interpreted (a string literal, a quoted identifier, a comment).
type segment struct {
	text string
	code bool
}

// lex cuts SQL into code and opaque segments. It knows '…' (with ”), E'…'
// (with \'), "…", $tag$…$tag$, -- and /* */ comments. It never fails: an
// unterminated literal runs to the end of the text.
func lex(q string) []segment {
	var out []segment
	start := 0
	emit := func(end int, code bool) {
		if end > start {
			out = append(out, segment{text: q[start:end], code: code})
		}
		start = end
	}
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case c == '\'':
			emit(i, true)
			escapes := i > 0 && (q[i-1] == 'e' || q[i-1] == 'E')
			j := i + 1
			for j < len(q) {
				if escapes && q[j] == '\\' {
					j += 2
					continue
				}
				if q[j] == '\'' {
					if j+1 < len(q) && q[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = min(j+1, len(q))
			emit(i, false)
		case c == '"':
			emit(i, true)
			j := i + 1
			for j < len(q) {
				if q[j] == '"' {
					if j+1 < len(q) && q[j+1] == '"' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = min(j+1, len(q))
			emit(i, false)
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			emit(i, true)
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				i = len(q)
			} else {
				i += j
			}
			emit(i, false)
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			emit(i, true)
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				i = len(q)
			} else {
				i += j + 4
			}
			emit(i, false)
		case c == '$':
			// $tag$ … $tag$ (a positional parameter $1 is code).
			j := i + 1
			for j < len(q) && (q[j] == '_' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= 'A' && q[j] <= 'Z' || j > i+1 && q[j] >= '0' && q[j] <= '9') {
				j++
			}
			if j < len(q) && q[j] == '$' {
				tag := q[i : j+1]
				emit(i, true)
				k := strings.Index(q[j+1:], tag)
				if k < 0 {
					i = len(q)
				} else {
					i = j + 1 + k + len(tag)
				}
				emit(i, false)
				continue
			}
			i++
		default:
			i++
		}
	}
	emit(len(q), true)
	return out
}

// splitStatements cuts a simple-query string at top-level semicolons. Empty
// statements are dropped.
func splitStatements(q string) []string {
	var out []string
	var cur strings.Builder
	for _, s := range lex(q) {
		if !s.code {
			cur.WriteString(s.text)
			continue
		}
		parts := strings.Split(s.text, ";")
		for i, p := range parts {
			if i > 0 {
				if strings.TrimSpace(stripComments(cur.String())) != "" {
					out = append(out, strings.TrimSpace(cur.String()))
				}
				cur.Reset()
			}
			cur.WriteString(p)
		}
	}
	if strings.TrimSpace(stripComments(cur.String())) != "" {
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}

// stripComments removes comments, keeping literals.
func stripComments(q string) string {
	var b strings.Builder
	for _, s := range lex(q) {
		if !s.code && (strings.HasPrefix(s.text, "--") || strings.HasPrefix(s.text, "/*")) {
			b.WriteByte(' ')
			continue
		}
		b.WriteString(s.text)
	}
	return b.String()
}

// codeOnly is the statement with every literal, identifier and comment blanked:
// what keyword checks look at.
func codeOnly(q string) string {
	var b strings.Builder
	for _, s := range lex(q) {
		if s.code {
			b.WriteString(s.text)
		} else {
			b.WriteString(" _ ")
		}
	}
	return b.String()
}

// paramCount is the highest $n in the statement's code.
func paramCount(q string) int {
	n := 0
	for _, s := range lex(q) {
		if !s.code {
			continue
		}
		t := s.text
		for i := 0; i < len(t); i++ {
			if t[i] != '$' {
				continue
			}
			j := i + 1
			for j < len(t) && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			if j > i+1 {
				if v, err := strconv.Atoi(t[i+1 : j]); err == nil && v > n {
					n = v
				}
			}
			i = j - 1
		}
	}
	return n
}

// firstWord is the statement's first keyword, upper-cased.
func firstWord(q string) string {
	t := strings.TrimSpace(stripComments(q))
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
// lex it never fails.
func tokenize(q string) []token {
	var out []token
	pos := 0
	for _, s := range lex(q) {
		start := pos
		pos += len(s.text)
		if !s.code {
			switch s.text[0] {
			case '"':
				out = append(out, token{kind: tokQuoted, text: s.text, start: start, end: pos})
			case '\'', '$':
				t := token{kind: tokString, text: s.text, start: start, end: pos}
				// An E'…' literal: lex left the E at the end of the code before.
				if n := len(out); s.text[0] == '\'' && n > 0 && out[n-1].end == start && strings.EqualFold(out[n-1].text, "e") {
					t.start, t.text = out[n-1].start, q[out[n-1].start:pos]
					out = out[:n-1]
				}
				out = append(out, t)
			}
			continue
		}
		t := s.text
		for i := 0; i < len(t); {
			c := t[i]
			j := i + 1
			kind := tokPunct
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
				i++
				continue
			case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
				for j < len(t) && (t[j] == '_' || t[j] == '$' || t[j] >= 'a' && t[j] <= 'z' || t[j] >= 'A' && t[j] <= 'Z' || t[j] >= '0' && t[j] <= '9' || t[j] >= 0x80) {
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
				kind = tokOp
			}
			out = append(out, token{kind: kind, text: t[i:j], start: start + i, end: start + j})
			i = j
		}
	}
	return out
}
