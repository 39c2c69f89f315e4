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

// replaceCode applies f to every code segment.
func replaceCode(q string, f func(string) string) string {
	var b strings.Builder
	for _, s := range lex(q) {
		if s.code {
			b.WriteString(f(s.text))
		} else {
			b.WriteString(s.text)
		}
	}
	return b.String()
}
