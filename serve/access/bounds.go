package access

import (
	"fmt"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// Limits bound what one statement may ask of the server. The text's bounds
// are checked by one pass over its bytes before anything tokenizes, translates
// or parses it: the dialect layer and DuckDB's parser cost tens of bytes per
// byte of statement, and a deep nesting recursion in both.
type Limits struct {
	// MaxStatementBytes bounds one statement's text (a simple query's whole
	// string); 0 is DefaultLimits'.
	MaxStatementBytes int
	// MaxParameters bounds the $n parameters of one statement; 0 is
	// DefaultLimits' (PostgreSQL's own wire limit).
	MaxParameters int
	// MaxNesting bounds how deep parentheses and brackets nest; 0 is
	// DefaultLimits' (DuckDB's max_expression_depth).
	MaxNesting int
	// MaxResultRows bounds the rows one statement returns (the statement
	// fails after sending that many); 0 is no bound: results stream, so
	// their size costs the server no memory.
	MaxResultRows int64
}

// DefaultLimits are the bounds of a server that sets none.
var DefaultLimits = Limits{MaxStatementBytes: 1 << 20, MaxParameters: 65535, MaxNesting: 1000}

// orDefault is l with every unset bound DefaultLimits'.
func (l Limits) orDefault() Limits {
	if l.MaxStatementBytes <= 0 {
		l.MaxStatementBytes = DefaultLimits.MaxStatementBytes
	}
	if l.MaxParameters <= 0 {
		l.MaxParameters = DefaultLimits.MaxParameters
	}
	if l.MaxNesting <= 0 {
		l.MaxNesting = DefaultLimits.MaxNesting
	}
	return l
}

// CheckStatement refuses a statement text over a bound: its length, its
// nesting, the highest $n it names.
func (l Limits) CheckStatement(q string) error {
	l = l.orDefault()
	if len(q) > l.MaxStatementBytes {
		return &Refusal{Code: "54000",
			Message: fmt.Sprintf("statement of %d bytes exceeds the server's limit of %d bytes per statement (max_statement_bytes)", len(q), l.MaxStatementBytes),
			Hint:    "Send values as parameters or split the statement; the operator sets the limit with msql serve --max-statement-bytes."}
	}
	depth, param := shape(q, l.MaxNesting)
	if depth > l.MaxNesting {
		return &Refusal{Code: "54001",
			Message: fmt.Sprintf("statement too complex: parentheses nested more than %d deep (max_nesting)", l.MaxNesting),
			Hint:    "Flatten the expression; the operator sets the limit with msql serve --max-nesting."}
	}
	return l.CheckParameters(param)
}

// CheckParameters refuses a statement of more than MaxParameters parameters.
func (l Limits) CheckParameters(n int) error {
	l = l.orDefault()
	if n <= l.MaxParameters {
		return nil
	}
	return &Refusal{Code: "54000",
		Message: fmt.Sprintf("statement has %d parameters, more than the server's limit of %d (max_parameters)", n, l.MaxParameters),
		Hint:    "Pass many values as one array parameter; the operator sets the limit with msql serve --max-parameters."}
}

// CheckRows refuses the row after MaxResultRows.
func (l Limits) CheckRows(sent int64) error {
	if l.MaxResultRows <= 0 || sent < l.MaxResultRows {
		return nil
	}
	return &Refusal{Code: "54000",
		Message: fmt.Sprintf("the result exceeds the server's limit of %d rows per statement (max_result_rows)", l.MaxResultRows),
		Hint:    "Aggregate, filter or page the statement (LIMIT/OFFSET, a cursor); the operator sets the limit with msql serve --max-result-rows."}
}

// shape is how deep parentheses and brackets nest in q's code (literals,
// quoted identifiers and comments skipped) and the highest $n it names, in
// one pass without allocating. It stops counting past limit.
func shape(q string, limit int) (maxDepth, maxParam int) {
	depth := 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '(' || c == '[':
			depth++
			if depth > maxDepth {
				maxDepth = depth
				if maxDepth > limit {
					return maxDepth, maxParam
				}
			}
		case c == ')' || c == ']':
			depth = max(depth-1, 0)
		case c == '\'' || c == '"':
			escapes := c == '\'' && i > 0 && (q[i-1] == 'E' || q[i-1] == 'e')
			i = skipQuoted(q, i, c, escapes)
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			i = skipBlockComment(q, i)
		case c == '$' && (i == 0 || !identByte(q[i-1])):
			var n int
			i, n = skipDollar(q, i)
			maxParam = max(maxParam, n)
		}
	}
	return maxDepth, maxParam
}

// skipQuoted returns the index of the quote closing the literal or
// identifier opened at i (a doubled quote is part of it, and with escapes —
// an E'…' literal — a backslashed one), or the end.
func skipQuoted(q string, i int, quote byte, escapes bool) int {
	for i++; i < len(q); i++ {
		if q[i] == quote {
			if i+1 < len(q) && q[i+1] == quote {
				i++
				continue
			}
			return i
		}
		if escapes && q[i] == '\\' {
			i++
		}
	}
	return len(q)
}

// skipBlockComment returns the index of the end of the (nested) comment
// opened at i.
func skipBlockComment(q string, i int) int {
	nest := 0
	for ; i+1 < len(q); i++ {
		switch {
		case q[i] == '/' && q[i+1] == '*':
			nest++
			i++
		case q[i] == '*' && q[i+1] == '/':
			nest--
			i++
			if nest == 0 {
				return i
			}
		}
	}
	return len(q)
}

// skipDollar reads what starts at the '$' at i: a parameter $n (its number,
// capped so it cannot overflow) or a dollar-quoted literal $tag$…$tag$
// (skipped). It returns the index of the construct's last byte.
func skipDollar(q string, i int) (int, int) {
	j := i + 1
	n := 0
	for j < len(q) && q[j] >= '0' && q[j] <= '9' {
		n = min(n*10+int(q[j]-'0'), 1<<30)
		j++
	}
	if j > i+1 {
		return j - 1, n
	}
	for j < len(q) && sqltext.IdentByte(q[j]) {
		j++
	}
	if j >= len(q) || q[j] != '$' {
		return i, 0 // a lone $ (part of an identifier or operator)
	}
	tag := q[i : j+1]
	for k := j + 1; k+len(tag) <= len(q); k++ {
		if q[k] == '$' && q[k:k+len(tag)] == tag {
			return k + len(tag) - 1, 0
		}
	}
	return len(q), 0
}

// identByte is whether c may continue an identifier in PostgreSQL's text,
// where $ may too: the $ of a$1 begins no parameter.
func identByte(c byte) bool { return sqltext.IdentByte(c) || c == '$' }
