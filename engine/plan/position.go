package plan

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// positioned is an error whose text points into the user's statement.
type positioned struct {
	msg string
	err error
}

func (p *positioned) Error() string { return p.msg }
func (p *positioned) Unwrap() error { return p.err }

// errorContext is where DuckDB's message quotes the statement it ran.
const errorContext = "\n\nLINE "

// InUserStatement rewrites a DuckDB error about the statement the engine ran
// (the user's statement with its relations replaced by their tier split) so
// that it quotes the user's statement instead: DuckDB's "LINE 1: …" context
// with its caret is dropped, and a caret is drawn under the same text in the
// user's statement when that text occurs there exactly once. The error still
// wraps err.
func InUserStatement(err error, user, ran string) error {
	msg := err.Error()
	i := strings.Index(msg, errorContext)
	if i < 0 {
		return err
	}
	out := msg[:i]
	if at, ok := matchCaret(msg[i+2:], user); ok {
		out += "\n\n" + caretContext(user, at)
	}
	return &positioned{msg: out, err: err}
}

// matchCaret finds the byte offset in user of the text DuckDB's context
// ("LINE n: …excerpt…\n      ^") points at: the shortest piece of the
// excerpt ending at the caret's token that occurs once in user.
func matchCaret(context, user string) (int, bool) {
	excerptLine, caretLine, ok := strings.Cut(context, "\n")
	if !ok {
		return 0, false
	}
	colon := strings.Index(excerptLine, ": ")
	caret := strings.IndexByte(caretLine, '^')
	if colon < 0 || caret < colon+2 {
		return 0, false
	}
	excerpt, col := excerptLine[colon+2:], caret-(colon+2)
	if rest, ok := strings.CutPrefix(excerpt, "..."); ok {
		excerpt, col = rest, col-3
	}
	excerpt = strings.TrimSuffix(excerpt, "...")
	off := runeOffset(excerpt, col)
	if off < 0 || off >= len(excerpt) {
		return 0, false
	}
	token := excerpt[off : off+tokenLen(excerpt[off:])]
	for k := 0; k <= off; k++ {
		piece := excerpt[off-k : off+len(token)]
		switch strings.Count(user, piece) {
		case 0:
			return 0, false
		case 1:
			return strings.Index(user, piece) + k, true
		}
	}
	return 0, false
}

// runeOffset is the byte offset of the col-th character of s (-1 past it).
func runeOffset(s string, col int) int {
	if col < 0 {
		return -1
	}
	for i := range s {
		if col == 0 {
			return i
		}
		col--
	}
	return -1
}

// tokenLen is the length of the token s starts with: a word (a qualified
// name, dots and all), a quoted literal or identifier, or one other character.
func tokenLen(s string) int {
	if s[0] == '\'' || s[0] == '"' {
		if j := strings.IndexByte(s[1:], s[0]); j >= 0 {
			return j + 2
		}
		return len(s)
	}
	n := 0
	for n < len(s) && (sqltext.IdentByte(s[n]) || s[n] == '.') {
		n++
	}
	if n == 0 {
		_, n = utf8.DecodeRuneInString(s)
	}
	return n
}

// caretContext is DuckDB's context format for the user's statement: the line
// holding byte offset at (cut to about 80 characters around it) and a caret
// under it.
func caretContext(q string, at int) string {
	lineNo := strings.Count(q[:at], "\n") + 1
	start := strings.LastIndexByte(q[:at], '\n') + 1
	end := len(q)
	if j := strings.IndexByte(q[at:], '\n'); j >= 0 {
		end = at + j
	}
	line, col := q[start:end], utf8.RuneCountInString(q[start:at])
	const half = 40
	if r := []rune(line); len(r) > 2*half {
		lo, hi, pre, post := max(0, col-half), min(len(r), col+half), "", ""
		if lo > 0 {
			pre = "..."
		}
		if hi < len(r) {
			post = "..."
		}
		line, col = pre+string(r[lo:hi])+post, col-lo+len(pre)
	}
	head := fmt.Sprintf("LINE %d: ", lineNo)
	return head + line + "\n" + strings.Repeat(" ", len(head)+col) + "^"
}

// parseError is DuckDB's parser refusing q, with a caret at position (a byte
// offset DuckDB reports; negative when it reports none).
func parseError(q, msg string, position int) error {
	if position >= 0 && position <= len(q) {
		msg += "\n\n" + caretContext(q, position)
	}
	return &ParseError{Message: msg}
}
