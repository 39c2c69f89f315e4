// Package sqltext is the one lexer for SQL text that has not reached DuckDB's
// parser yet: the shell cuts what is typed into statements with it, and the
// PostgreSQL wire server cuts a simple query and looks at its keywords. It
// knows only what can hide a semicolon or a keyword — '…' (with ”), E'…'
// (with \' as well), "…" (with ""), $tag$…$tag$, -- and /* */ comments — and
// never fails: an unterminated literal or comment runs to the end of the text
// and is reported open.
//
// It is also where SQL text is written and its words are recognised: the
// string literal and quoted identifier every package builds statements with
// (String, Ident), and the bytes an unquoted identifier is made of
// (IdentStart, IdentByte). It imports nothing of the module, so every
// package can use it — the DuckDB stream and the planner above it alike.
package sqltext

import "strings"

// Segment is a piece of SQL text: code, or something whose contents must not
// be interpreted (a string literal, a quoted identifier, a comment).
type Segment struct {
	Text string
	Code bool
	// Open: a literal or comment the text ends inside of.
	Open bool
}

// IsComment reports a comment segment.
func (s Segment) IsComment() bool {
	return !s.Code && (strings.HasPrefix(s.Text, "--") || strings.HasPrefix(s.Text, "/*"))
}

// Lex cuts q into code and opaque segments.
func Lex(q string) []Segment {
	var out []Segment
	start := 0
	emit := func(end int, code, open bool) {
		if end > start {
			out = append(out, Segment{Text: q[start:end], Code: code, Open: open})
		}
		start = end
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			emit(i, true, false)
			escapes := c == '\'' && i > 0 && (q[i-1] == 'e' || q[i-1] == 'E')
			end, open := quoted(q, i, c, escapes)
			i = end
			emit(i, false, open)
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			emit(i, true, false)
			j := strings.IndexByte(q[i:], '\n')
			open := j < 0
			if open {
				i = len(q)
			} else {
				i += j
			}
			emit(i, false, open)
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			emit(i, true, false)
			j := strings.Index(q[i+2:], "*/")
			open := j < 0
			if open {
				i = len(q)
			} else {
				i += j + 4
			}
			emit(i, false, open)
		case c == '$':
			tag, ok := DollarTag(q[i:])
			if !ok { // a positional parameter $1, or a lone $
				i++
				continue
			}
			emit(i, true, false)
			k := strings.Index(q[i+len(tag):], tag)
			open := k < 0
			if open {
				i = len(q)
			} else {
				i += len(tag) + k + len(tag)
			}
			emit(i, false, open)
		default:
			i++
		}
	}
	emit(len(q), true, false)
	return out
}

// quoted finds the end of the literal or identifier opening at q[i] (quote
// c): a doubled quote continues it, and so does \x in an E'…' string.
func quoted(q string, i int, c byte, escapes bool) (end int, open bool) {
	j := i + 1
	for j < len(q) {
		switch {
		case escapes && q[j] == '\\':
			j += 2
			continue
		case q[j] == c && j+1 < len(q) && q[j+1] == c:
			j += 2
			continue
		case q[j] == c:
			return j + 1, false
		}
		j++
	}
	return len(q), true
}

// DollarTag recognises $$ or $tag$ at the start of s: a tag is made as an
// identifier is, without $.
func DollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		c := s[j]
		if c == '$' {
			return s[:j+1], true
		}
		if !(IdentStart(c) || j > 1 && IdentByte(c)) {
			return "", false
		}
	}
	return "", false
}

// Cut splits q at the semicolons in its code: the statements a semicolon
// ended, each as written (untrimmed, without its semicolon), and the text
// after the last one — open when it ends inside a literal or comment.
func Cut(q string) (stmts []string, rest string, open bool) {
	var cur strings.Builder
	for _, s := range Lex(q) {
		if !s.Code {
			cur.WriteString(s.Text)
			open = s.Open
			continue
		}
		parts := strings.Split(s.Text, ";")
		for i, p := range parts {
			if i > 0 {
				stmts = append(stmts, cur.String())
				cur.Reset()
			}
			cur.WriteString(p)
		}
		if s.Text != "" {
			open = false
		}
	}
	return stmts, cur.String(), open
}

// StripComments replaces each comment with a space, keeping literals.
func StripComments(q string) string {
	var b strings.Builder
	for _, s := range Lex(q) {
		if s.IsComment() {
			b.WriteByte(' ')
			continue
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

// OnlyComments reports text that holds nothing but comments and spacing.
func OnlyComments(q string) bool { return strings.TrimSpace(StripComments(q)) == "" }
