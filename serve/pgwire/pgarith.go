package pgwire

import (
	"bytes"
	"fmt"
	"strings"
)

// PostgreSQL's arithmetic where DuckDB's would answer another number without
// an error (docs/pgwire.md, "Where msql serve differs from PostgreSQL"):
//
//   - / is integer division when both operands are integers (7/2 is 3, -7/2
//     is -3): the translator writes DuckDB's // for it, which divides
//     integers truncating toward zero and every other number as / does. //
//     has no interval overload, so dividing an interval is refused
//     (intervalDivision) rather than answered as a number;
//   - numeric (or decimal) without precision and scale is refused: DuckDB
//     reads it as decimal(18,3) and rounds 1.23456 to 1.235, where
//     PostgreSQL keeps every digit;
//   - round(x) of a float8 lying exactly halfway is refused when it runs:
//     PostgreSQL rounds float8 half to even (round(2.5::float8) is 2),
//     DuckDB half away from zero (3); a numeric, which PostgreSQL rounds half
//     away from zero too, is answered — but DuckDB holds avg() and the
//     quotient of numerics as a double, so those are refused at .5 as well.

// integerDivision is the operator written for PostgreSQL's /.
const integerDivision = "//"

// intervalDivisionMarker is in DuckDB's binder error for an interval divided
// with //.
const intervalDivisionMarker = "'//(INTERVAL"

// roundHalfMarker is in the error raised by a round() refused at a half.
const roundHalfMarker = "lies exactly halfway"

// unconstrainedNumeric reports whether the type name at token i (after :: or
// CAST(… AS) is numeric or decimal with no precision and scale.
func (t *translator) unconstrainedNumeric(i, hi int) bool {
	if i+2 < hi && t.toks[i].is("pg_catalog") && t.toks[i+1].text == "." {
		i += 2
	}
	if i >= hi || t.toks[i].kind != tokWord || !(t.toks[i].is("numeric") || t.toks[i].is("decimal")) {
		return false
	}
	return i+1 >= hi || t.toks[i+1].text != "("
}

// inCast reports whether token i is directly inside the parentheses of
// CAST( or TRY_CAST(.
func (t *translator) inCast(i int) bool {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch t.toks[j].text {
		case ")", "]":
			depth++
		case "(", "[":
			if depth == 0 {
				return j > 0 && (t.toks[j-1].is("cast") || t.toks[j-1].is("try_cast"))
			}
			depth--
		}
	}
	return false
}

// refuseUnconstrainedNumeric fails the translation of a cast to numeric
// without precision and scale at token i (the type name).
func (t *translator) refuseUnconstrainedNumeric(i int) {
	t.fail(&pgError{code: "0A000",
		msg: fmt.Sprintf("%s without precision and scale is not supported: this server reads it as numeric(18,3) "+
			"and would round to 3 decimals (1.23456 to 1.235), where PostgreSQL keeps every digit", t.toks[i].text),
		hint: "give the precision and scale you need, e.g. numeric(38,6); readings.value is numeric(18,6)"})
}

// halfMessage is the refusal of rounding a float8 that lies exactly halfway:
// PostgreSQL rounds float8 half to even and numeric half away from zero, and
// DuckDB holds as a double what PostgreSQL holds as numeric (avg(), the
// quotient of numerics), so the answer cannot be told.
func halfMessage(what, fix string) string {
	return what + ": the float8 value " + roundHalfMarker + " between two integers; PostgreSQL rounds float8 half to even " +
		"(round(2.5::float8) is 2) and numeric half away from zero (round(2.5) is 3), and this server holds avg() and the " +
		"quotient of numerics as float8, so it cannot tell which answer is PostgreSQL's: " + fix
}

// halfChecked is x, raising msg where x is a double lying exactly halfway
// between two integers.
func halfChecked(x, msg string) string {
	// Through VARCHAR, the test binds for an operand of any type (DuckDB binds
	// every branch); it runs for doubles only, whose shortest text reads back
	// exactly.
	return fmt.Sprintf("(CASE WHEN typeof(%[1]s) IN ('DOUBLE', 'FLOAT') AND abs(CAST(CAST(%[1]s AS VARCHAR) AS DOUBLE)) %% 1 = 0.5 "+
		"THEN error(%[2]s) ELSE %[1]s END)",
		"("+x+")", sqlLiteral(msg))
}

// roundSQL is round(x) with one argument: DuckDB's round, refused where x is
// a double lying exactly halfway.
func roundSQL(x string) string {
	return "round(" + halfChecked(x, halfMessage("round()", "cast the argument to the type you mean, e.g. round(x::numeric(38,6))")) + ")"
}

// extractSecondSQL is extract(second FROM x) — and date_part('second', x) when
// asFloat — with the fraction of the second: DuckDB's are whole seconds
// (30 for 00:00:30.5), PostgreSQL's numeric 30.500000 and float8 30.5.
func extractSecondSQL(x string, asFloat bool) string {
	if asFloat {
		return fmt.Sprintf("(date_part('microseconds', %s) / 1e6)", x)
	}
	return fmt.Sprintf("CAST(CAST(date_part('microseconds', %s) AS DECIMAL(18,0)) * 0.000001 AS DECIMAL(8,6))", x)
}

// extractField is the field of extract(field FROM …) or date_part('field', …)
// at token i, lower case.
func (t *translator) extractField(i int) string {
	switch tok := t.toks[i]; tok.kind {
	case tokWord:
		return tok.word()
	case tokString:
		return strings.ToLower(tok.stringValue())
	}
	return ""
}

// integerTypes are the names of PostgreSQL's integer types.
var integerTypes = map[string]bool{"int": true, "integer": true, "int2": true, "int4": true, "int8": true,
	"smallint": true, "bigint": true}

// integerCastSQL is x cast to an integer type: PostgreSQL rounds a float8
// half to even and a numeric half away from zero, DuckDB a double half to
// even (avg(x)::int is 2 for 2.5 where PostgreSQL's numeric avg gives 3), so
// a double lying exactly halfway is refused.
func integerCastSQL(x, typ string) string {
	return halfChecked(x, halfMessage("cast to "+typ, "round first with the rule you mean, e.g. round(x::numeric(38,6))::"+typ))
}

// integerCast is CAST(x AS int) and its kin, checked as x::int is; ok is
// false for any other cast.
func (t *translator) integerCast(args []span) (string, bool) {
	if len(args) != 1 {
		return "", false
	}
	lo, typ := args[0].lo, args[0].hi-1
	as := typ - 1
	if as <= lo || !t.toks[as].is("as") || t.toks[typ].kind != tokWord || !integerTypes[t.toks[typ].word()] ||
		as-lo == 1 && t.toks[lo].kind == tokParam {
		return "", false
	}
	return "CAST(" + integerCastSQL(t.emit(lo, as), t.toks[typ].word()) + " AS " + t.toks[typ].text + ")", true
}

// primaryStart is the index of the first token of the operand that ends just
// before token end and that a postfix :: applies to (a name, a call with its
// FILTER or OVER, a parenthesised expression, CASE … END, a number, a
// subscript, an earlier cast), or -1 if it cannot tell (a bound parameter
// has the type its client gave it, as in PostgreSQL).
func (t *translator) primaryStart(lo, end int) int {
	j := end - 1
	if j < lo {
		return -1
	}
	tok := t.toks[j]
	switch {
	case tok.text == ")" || tok.text == "]":
		o := t.opening(lo, j)
		if o < 0 {
			return -1
		}
		if tok.text == "]" {
			return t.primaryStart(lo, o)
		}
		j = o
		if j-1 >= lo && (t.toks[j-1].is("over") || t.toks[j-1].is("filter")) {
			return t.primaryStart(lo, j-1)
		}
		if j-1 >= lo && (t.toks[j-1].kind == tokQuoted || t.toks[j-1].kind == tokWord && !notCallee[t.toks[j-1].word()]) {
			j--
		}
	case tok.is("end"):
		depth := 0
		for ; j >= lo; j-- {
			if t.toks[j].is("end") {
				depth++
			} else if t.toks[j].is("case") {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j < lo {
			return -1
		}
	case tok.kind == tokWord && !isReserved(tok.word()), tok.kind == tokQuoted, tok.kind == tokNumber:
	default:
		return -1
	}
	for j-2 >= lo && t.toks[j-1].text == "." && (t.toks[j-2].kind == tokWord || t.toks[j-2].kind == tokQuoted) {
		j -= 2
	}
	if j-1 >= lo && t.toks[j-1].text == "::" {
		return t.primaryStart(lo, j-1)
	}
	return j
}

// notCallee are the words before a parenthesis that make it a parenthesised
// expression, not a call's arguments.
var notCallee = map[string]bool{"select": true, "and": true, "or": true, "not": true, "in": true, "when": true,
	"then": true, "else": true, "where": true, "on": true, "by": true, "as": true, "from": true, "having": true,
	"between": true, "like": true, "ilike": true, "is": true, "any": true, "all": true, "some": true, "values": true,
	"return": true, "distinct": true, "case": true}

// checkIntegerCast rewrites the operand already written to b of a cast to an
// integer type at token i (::): at[k] is where token k's text starts in b.
func (t *translator) checkIntegerCast(b *bytes.Buffer, at map[int]int, lo, i int) {
	p := t.primaryStart(lo, i)
	start, ok := at[p]
	if p < 0 || !ok {
		return
	}
	x := strings.TrimRight(b.String()[start:], " \t\r\n")
	b.Truncate(start)
	b.WriteString(integerCastSQL(x, t.toks[i+1].word()))
}

// opening is the index of the bracket opening the one closing at close, or -1.
func (t *translator) opening(lo, close int) int {
	depth := 0
	for j := close; j >= lo; j-- {
		switch t.toks[j].text {
		case ")", "]":
			depth++
		case "(", "[":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// arithRefusal is the SQLSTATE and message of a refusal of this file, from
// the text of DuckDB's error; ok is false for any other error.
func arithRefusal(msg string) (code, out string, ok bool) {
	switch {
	case strings.Contains(msg, intervalDivisionMarker):
		return "0A000", "dividing an interval is not supported: this server divides with PostgreSQL's integer division, " +
			"which it has for numbers only; multiply by the reciprocal instead, e.g. INTERVAL '1 hour' * 0.5", true
	case strings.Contains(msg, roundHalfMarker):
		i := strings.Index(msg, "Invalid Input Error: ")
		if i >= 0 {
			msg = msg[i+len("Invalid Input Error: "):]
		}
		return "0A000", msg, true
	case strings.Contains(msg, "Out of Range Error: Overflow"):
		return "22003", msg, true
	}
	return "", "", false
}

func isArithRefusal(msg string) bool {
	_, _, ok := arithRefusal(msg)
	return ok
}
