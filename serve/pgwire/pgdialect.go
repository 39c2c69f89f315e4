package pgwire

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/meterstore/meterstore/serve/access"
)

// translate rewrites a statement a PostgreSQL client wrote into one the
// engine's DuckDB plans with PostgreSQL's meaning. DuckDB's parser takes most
// of PostgreSQL's syntax, but answers some of it differently or not at all;
// what clients send on connect and to browse the catalog hits exactly those
// places:
//
//   - a relation of the virtual catalog (pgvirtual.go) — pg_catalog.pg_class,
//     information_schema.columns, … — is read from a common table expression
//     holding PostgreSQL's answer, added to the statement;
//   - schema public is the engine's main (the catalog says public);
//   - 'name'::regclass, ::regtype, ::regnamespace become the oid, ::regproc the
//     name, and so does CAST('name' AS regclass); the casts of an expression to
//     them are dropped (the oid remains);
//   - ~ and !~ with a literal pattern match anywhere in the string, as in
//     PostgreSQL (DuckDB's must match the whole string); ~* and !~* likewise,
//     ignoring case;
//   - the right operand of / and % is checked for zero: PostgreSQL raises
//     "division by zero" (22012) where DuckDB answers NULL or infinity, a
//     wrong number without an error;
//   - / divides integers as PostgreSQL does, numeric without precision and
//     scale and round() of a float8 at a half are refused (pgarith.go);
//   - LIKE with a backslash in a literal pattern gets PostgreSQL's default
//     ESCAPE '\' (DuckDB has none: a client's escaped _ would match nothing);
//   - functions DuckDB lacks or answers for its own catalog: version(),
//     current_setting(), current_schema(s), current_database(), current_user,
//     user, quote_ident, parse_ident, array_lower/upper, format_type,
//     pg_get_userbyid, pg_get_indexdef, pg_get_constraintdef, json_build_object,
//     information_schema._pg_expandarray;
//   - a function call qualified by pg_catalog loses the qualifier (DuckDB's
//     builtins are not in its pg_catalog schema);
//   - in FROM, a scalar function (string_to_array(…) s) becomes a one-row
//     subquery, and a set-returning function's alias names its column too
//     (generate_series(…) AS i), as PostgreSQL has it.
//
// Everything else is left as the client wrote it, spacing and comments
// included. The engine's gate then sees the statement like any other.
func (sess *pgSession) translate(ctx context.Context, q string) (string, error) {
	t := &translator{ctx: ctx, sess: sess, src: q, toks: tokenize(q), used: map[string]bool{}}
	n := len(t.toks)
	if n == 0 {
		return q, nil
	}
	start := 0
	if t.toks[0].is("with") {
		start = 1
		if n > 1 && t.toks[1].is("recursive") {
			start = 2
		}
	}
	if start >= n {
		return q, nil
	}
	body := t.emit(start, n) + q[t.toks[n-1].end:]
	if t.err != nil {
		return "", t.err
	}
	if len(t.used) == 0 {
		return q[:t.toks[start].start] + body, nil
	}
	cat := t.catalog()
	if t.err != nil {
		return "", t.err
	}
	names := make([]string, 0, len(t.used))
	for name := range t.used {
		names = append(names, name)
	}
	sort.Strings(names)
	defs := make([]string, len(names))
	vs := sess.vsession()
	for i, name := range names {
		defs[i] = name + " AS (" + cat.virtualSQL(name, vs) + ")"
	}
	if start > 0 {
		head := t.toks[start-1].end
		return q[:head] + " " + strings.Join(defs, ", ") + "," + q[head:t.toks[start].start] + body, nil
	}
	return "WITH " + strings.Join(defs, ", ") + " " + q[:t.toks[0].start] + body, nil
}

func (sess *pgSession) vsession() vsession {
	return vsession{user: sess.user, roles: sess.srv.Users.Names(), database: sess.database, params: sess.parameters(), cursors: sess.cursors(),
		activity: sess.srv.activity(sess)}
}

type translator struct {
	ctx  context.Context
	sess *pgSession
	src  string
	toks []token
	used map[string]bool // virtual relations referenced
	err  error
}

func (t *translator) catalog() *pgCatalog {
	c, err := t.sess.catalog(t.ctx)
	if err != nil && t.err == nil {
		t.err = err
	}
	return c
}

func (t *translator) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// span is a range of tokens [lo, hi).
type span struct{ lo, hi int }

// The keywords that switch the clause, the words that cannot be a FROM item's
// alias, and the functions FROM and argument lists treat specially.
var (
	clauseOf = map[string]string{
		"select": "select", "from": "from", "join": "from", "where": "other", "group": "other", "having": "other",
		"order": "other", "limit": "other", "offset": "other", "window": "other", "on": "other", "using": "other",
		"union": "other", "intersect": "other", "except": "other", "returning": "other", "fetch": "other",
	}
	notAlias = map[string]bool{
		"where": true, "join": true, "left": true, "right": true, "inner": true, "full": true, "cross": true,
		"natural": true, "on": true, "using": true, "group": true, "order": true, "limit": true, "offset": true,
		"union": true, "intersect": true, "except": true, "window": true, "having": true, "fetch": true, "lateral": true,
	}
	// setReturning are the table functions whose alias PostgreSQL also gives
	// their one column.
	setReturning = map[string]bool{"generate_series": true, "unnest": true}
	// scalarInFrom are the scalar functions PostgreSQL lets a FROM clause call
	// (one row, one column) that clients do call there.
	scalarInFrom = map[string]bool{"string_to_array": true, "current_schemas": true, "parse_ident": true}
	// inlineFrom are the functions whose argument syntax has a FROM keyword.
	inlineFrom = map[string]bool{"extract": true, "trim": true, "substring": true, "position": true, "overlay": true}
)

// emit translates tokens [lo, hi) and the text between them.
func (t *translator) emit(lo, hi int) string {
	var b bytes.Buffer
	depth := 0
	clause := map[int]string{}
	at := map[int]int{} // where each token's text starts in b
	for i := lo; i < hi; i++ {
		if i > lo {
			b.WriteString(t.src[t.toks[i-1].end:t.toks[i].start])
		}
		at[i] = b.Len()
		tok := t.toks[i]
		afterDot := i > lo && t.toks[i-1].text == "."
		switch {
		case tok.text == "(":
			depth++
			clause[depth] = ""
			if i > lo && inlineFrom[t.toks[i-1].word()] {
				clause[depth] = "call"
			}
		case tok.text == ")":
			depth--
		case tok.kind == tokWord && clause[depth] != "call":
			if c, ok := clauseOf[tok.word()]; ok {
				clause[depth] = c
			}
		}
		inFrom := clause[depth] == "from" && i > lo && (t.toks[i-1].is("from") || t.toks[i-1].is("join") ||
			t.toks[i-1].is("lateral") || t.toks[i-1].text == ",")

		if (tok.kind == tokWord || tok.kind == tokQuoted) && !afterDot {
			if next, out, ok := t.name(i, hi, inFrom); ok {
				b.WriteString(out)
				i = next - 1
				continue
			}
		}
		if tok.kind == tokString && i+2 < hi && t.toks[i+1].text == "::" {
			if out, ok := t.regLiteral(tok.stringValue(), t.toks[i+2].word()); ok {
				b.WriteString(out)
				i += 2
				continue
			}
		}
		if tok.kind == tokParam && i+2 < hi && t.toks[i+1].text == "::" {
			if out, ok := t.regParam(tok.text, t.toks[i+2].word()); ok {
				b.WriteString(out)
				i += 2
				continue
			}
		}
		if tok.text == "::" && i+3 < hi && t.toks[i+1].is("pg_catalog") && t.toks[i+2].text == "." {
			// ::pg_catalog.text: the types are DuckDB's, which has no such
			// schema; ::pg_catalog.regclass is dropped like ::regclass.
			if regTypes[t.toks[i+3].word()] {
				i += 3
				continue
			}
			b.WriteString("::")
			i += 2
			continue
		}
		if tok.text == "::" && i+1 < hi && t.toks[i+1].kind == tokWord && integerTypes[t.toks[i+1].word()] {
			t.checkIntegerCast(&b, at, lo, i)
		}
		if tok.text == "::" && t.unconstrainedNumeric(i+1, hi) ||
			tok.is("as") && t.unconstrainedNumeric(i+1, hi) && t.inCast(i) {
			t.refuseUnconstrainedNumeric(i + 1)
		}
		if tok.text == "::" && i+1 < hi {
			switch w := t.toks[i+1].word(); {
			case regTypes[w]:
				i++ // the oid itself is what DuckDB compares and shows
				continue
			case w == "name" || (w == "char" && t.toks[i+1].kind == tokQuoted):
				b.WriteString("::VARCHAR")
				i++
				continue
			}
		}
		if tok.kind == tokOp && i+1 < hi && t.toks[i+1].kind == tokString {
			switch tok.text {
			case "~", "!~", "~*", "!~*":
				flags := "(?s)"
				if strings.HasSuffix(tok.text, "*") {
					flags = "(?is)"
				}
				b.WriteString(strings.TrimSuffix(tok.text, "*"))
				b.WriteString(t.src[tok.end:t.toks[i+1].start])
				b.WriteString(sqlLiteral(flags + ".*(?:" + t.toks[i+1].stringValue() + ").*"))
				i++
				continue
			}
		}
		if (tok.text == "/" || tok.text == "%") && tok.kind == tokOp && i > lo &&
			(endsOperand(t.toks[i-1]) || i-2 >= lo && t.toks[i-2].text == "::") {
			if j := t.operandEnd(i+1, hi); j > i+1 {
				x := t.emit(i+1, j)
				if tok.text == "/" {
					b.WriteString(integerDivision)
				} else {
					b.WriteString(tok.text)
				}
				b.WriteString(t.src[tok.end:t.toks[i+1].start])
				fmt.Fprintf(&b, "(CASE WHEN (%[1]s) = 0 THEN error('division by zero') ELSE (%[1]s) END)", x)
				i = j - 1
				continue
			}
		}
		if (tok.is("like") || tok.is("ilike")) && i+1 < hi && t.toks[i+1].kind == tokString &&
			strings.Contains(t.toks[i+1].stringValue(), `\`) && (i+2 >= hi || !t.toks[i+2].is("escape")) {
			b.WriteString(t.src[tok.start:t.toks[i+1].end])
			b.WriteString(` ESCAPE '\'`)
			i++
			continue
		}
		b.WriteString(tok.text)
	}
	return b.String()
}

// endsOperand: a token an operand can end with, so an operator after it is binary.
func endsOperand(t token) bool {
	switch t.kind {
	case tokWord:
		return !isReserved(t.word()) || t.is("end") || t.is("null") || t.is("true") || t.is("false") ||
			t.is("precision") || t.is("zone") || t.is("varying") // the end of a type: ::double precision
	case tokQuoted, tokString, tokNumber, tokParam:
		return true
	}
	return t.text == ")" || t.text == "]"
}

// operandEnd is the index after the right operand of a multiplicative
// operator whose operand starts at i: an optional sign, one primary (a
// literal, a parameter, a (qualified) name, a call, a parenthesised
// expression, CAST(…), CASE … END) and its postfix casts, subscripts and
// exponents — what binds tighter than / and % in PostgreSQL. 0 if it cannot
// tell.
func (t *translator) operandEnd(i, hi int) int {
	for i < hi && (t.toks[i].text == "-" || t.toks[i].text == "+") {
		i++
	}
	if i >= hi {
		return 0
	}
	tok := t.toks[i]
	j := i + 1
	switch {
	case tok.text == "(":
		if c := t.matching(i, hi); c > 0 {
			j = c + 1
		} else {
			return 0
		}
	case tok.is("case"):
		depth := 0
		for j = i; j < hi; j++ {
			if t.toks[j].is("case") {
				depth++
			} else if t.toks[j].is("end") {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j >= hi {
			return 0
		}
		j++
	case tok.kind == tokWord || tok.kind == tokQuoted:
		for j+1 < hi && t.toks[j].text == "." && (t.toks[j+1].kind == tokWord || t.toks[j+1].kind == tokQuoted) {
			j += 2
		}
		if j < hi && t.toks[j].text == "(" {
			c := t.matching(j, hi)
			if c < 0 {
				return 0
			}
			j = c + 1
		} else if j < hi && t.toks[j].kind == tokString {
			j++ // a typed literal: interval '1 day', timestamptz '…'
		}
	case tok.kind == tokString || tok.kind == tokNumber || tok.kind == tokParam:
	default:
		return 0
	}
	for j < hi {
		switch {
		case t.toks[j].text == "::" && j+1 < hi && t.toks[j+1].kind == tokWord:
			j += 2
			if j < hi && t.toks[j].text == "(" {
				c := t.matching(j, hi)
				if c < 0 {
					return 0
				}
				j = c + 1
			}
		case t.toks[j].text == "[":
			c := t.matching(j, hi)
			if c < 0 {
				return 0
			}
			j = c + 1
		case t.toks[j].text == "^" && j+1 < hi:
			k := t.operandEnd(j+1, hi)
			if k == 0 {
				return 0
			}
			j = k
		default:
			return j
		}
	}
	return j
}

var regTypes = map[string]bool{"regclass": true, "regtype": true, "regproc": true, "regprocedure": true, "regnamespace": true, "regrole": true}

// regLiteral answers 'name'::regclass and its kin as PostgreSQL resolves them.
func (t *translator) regLiteral(name, typ string) (string, bool) {
	switch typ {
	case "regclass":
		c := t.catalog()
		if c == nil {
			return "", true
		}
		oid, ok := c.regclass(name)
		if !ok {
			t.fail(&pgError{code: "42P01", msg: fmt.Sprintf("relation %q does not exist", name)})
		}
		return strconv.FormatUint(uint64(oid), 10), true
	case "regtype":
		oid, ok := typeOID(name)
		if !ok {
			t.fail(&pgError{code: "42704", msg: fmt.Sprintf("type %q does not exist", name)})
		}
		return strconv.FormatUint(uint64(oid), 10), true
	case "regnamespace":
		oid, ok := map[string]int{"pg_catalog": oidPgCatalog, "public": oidPublic, "information_schema": oidInformationSchema}[name]
		if !ok {
			t.fail(&pgError{code: "3F000", msg: fmt.Sprintf("schema %q does not exist", name)})
		}
		return strconv.Itoa(oid), true
	case "regrole":
		if name != t.sess.user {
			t.fail(&pgError{code: "42704", msg: fmt.Sprintf("role %q does not exist", name)})
		}
		return strconv.Itoa(oidBootstrapSuperuser), true
	case "regproc", "regprocedure":
		// The name as regproc prints it: unqualified (pg_catalog is always
		// searched), without an argument list.
		name, _, _ = strings.Cut(strings.TrimPrefix(name, "pg_catalog."), "(")
		return sqlLiteral(name), true
	}
	return "", false
}

// name translates a (possibly schema-qualified) name at token i: a function
// call, a relation of the virtual catalog, schema public or a session
// keyword. It returns the index after what it consumed.
func (t *translator) name(i, hi int, inFrom bool) (int, string, bool) {
	qual, nameIdx := "", i
	if i+2 < hi && t.toks[i+1].text == "." && (t.toks[i+2].kind == tokWord || t.toks[i+2].kind == tokQuoted) {
		qual, nameIdx = t.toks[i].word(), i+2
	}
	name := t.toks[nameIdx].word()
	if nameIdx+1 < hi && t.toks[nameIdx+1].text == "(" {
		closing := t.matching(nameIdx+1, hi)
		if closing < 0 {
			return 0, "", false
		}
		args := t.args(nameIdx+2, closing)
		out, ok := t.call(qual, name, args)
		if ok {
			out = t.keepParams(nameIdx+2, closing, out)
		}
		if !ok && inFrom && scalarInFrom[name] {
			out, ok = t.emit(nameIdx, closing+1), true
		}
		if ok {
			next := closing + 1
			if inFrom && scalarInFrom[name] {
				alias, col, after := t.alias(next, hi, name)
				out = fmt.Sprintf("(SELECT %s AS %s) AS %s", out, col, alias)
				next = after
			}
			return next, out, true
		}
		if inFrom && setReturning[name] && qual == "" {
			if alias, after, ok := t.bareAlias(closing+1, hi); ok {
				return after, t.emit(i, after) + "(" + alias + ")", true
			}
		}
		if qual == "pg_catalog" {
			// DuckDB's builtins are not in its pg_catalog schema, which it
			// searches anyway for the pg_* functions it does define there.
			if next, out, ok := t.name(nameIdx, hi, inFrom); ok {
				return next, out, true
			}
			return nameIdx + 1, t.toks[nameIdx].text, true
		}
		return 0, "", false
	}
	switch {
	case qual == "pg_catalog" || qual == "information_schema":
		if v := virtualRelation(qual, name); v != "" {
			t.used[v] = true
			return nameIdx + 1, v, true
		}
	case qual == "public":
		return i + 1, "main", true
	case qual == "":
		if v := virtualRelation("", name); v != "" {
			t.used[v] = true
			return 0, "", false
		}
		if t.toks[i].kind != tokWord {
			return 0, "", false
		}
		switch name {
		case "current_user", "session_user", "user", "current_role":
			return i + 1, sqlLiteral(t.sess.user), true
		case "current_schema":
			return i + 1, "'public'", true
		case "current_catalog":
			return i + 1, sqlLiteral(t.sess.database), true
		}
	}
	return 0, "", false
}

// matching is the index of the parenthesis closing the one at open, or -1.
func (t *translator) matching(open, hi int) int {
	depth := 0
	for j := open; j < hi; j++ {
		switch t.toks[j].text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// args splits tokens [lo, hi) at top-level commas.
func (t *translator) args(lo, hi int) []span {
	if lo >= hi {
		return nil
	}
	var out []span
	depth, start := 0, lo
	for j := lo; j < hi; j++ {
		switch t.toks[j].text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, span{start, j})
				start = j + 1
			}
		}
	}
	return append(out, span{start, hi})
}

// alias reads a FROM item's alias at token i ([AS] name [(column)]): the alias
// (def if there is none), its column (the alias if none is listed) and the
// index after it.
func (t *translator) alias(i, hi int, def string) (alias, col string, next int) {
	j := i
	if j < hi && t.toks[j].is("as") {
		j++
	}
	if j >= hi || (t.toks[j].kind != tokWord && t.toks[j].kind != tokQuoted) || (t.toks[j].kind == tokWord && notAlias[t.toks[j].word()]) {
		return def, def, i
	}
	alias, col = t.toks[j].text, t.toks[j].text
	j++
	if j+2 < hi && t.toks[j].text == "(" && t.toks[j+2].text == ")" {
		col = t.toks[j+1].text
		j += 3
	}
	return alias, col, j
}

// bareAlias reads a FROM item's alias without a column list at token i
// ([AS] name): the alias and the index after it.
func (t *translator) bareAlias(i, hi int) (string, int, bool) {
	alias, _, next := t.alias(i, hi, "")
	if alias == "" || next < hi && t.toks[next].text == "(" || next > i && t.toks[next-1].text == ")" {
		return "", 0, false
	}
	return alias, next, true
}

func (t *translator) arg(s span) string { return t.emit(s.lo, s.hi) }

// literal is the value of an argument that is one string literal.
func (t *translator) literal(s span) (string, bool) {
	if s.hi-s.lo != 1 || t.toks[s.lo].kind != tokString {
		return "", false
	}
	return t.toks[s.lo].stringValue(), true
}

// call translates a call of a function DuckDB lacks or answers differently
// (for its own catalog); ok is false for any other call, left as written.
func (t *translator) call(qual, name string, args []span) (out string, ok bool) {
	schema := "pg_catalog"
	if name == "_pg_expandarray" {
		schema = "information_schema"
	}
	if qual != "" && qual != schema {
		return "", false
	}
	switch name {
	case "cast":
		if out, ok := t.regCast(args); ok {
			return out, true
		}
		return t.integerCast(args)
	case "extract":
		if len(args) != 1 || args[0].hi-args[0].lo < 3 || t.extractField(args[0].lo) != "second" || !t.toks[args[0].lo+1].is("from") {
			return "", false
		}
		return extractSecondSQL(t.emit(args[0].lo+2, args[0].hi), false), true
	case "date_part":
		if len(args) != 2 || args[0].hi-args[0].lo != 1 || t.toks[args[0].lo].kind != tokString || t.extractField(args[0].lo) != "second" {
			return "", false
		}
		return extractSecondSQL(t.arg(args[1]), true), true
	case "round":
		if len(args) != 1 {
			return "", false
		}
		return roundSQL(t.arg(args[0])), true
	case "json_build_object":
		return "json_object(" + t.emit(args[0].lo, args[len(args)-1].hi) + ")", len(args) > 0 && len(args)%2 == 0
	case "version":
		return "'PostgreSQL " + access.ServerVersion + " (MeterStore, read-only)'", len(args) == 0
	case "current_setting":
		if len(args) == 0 || len(args) > 2 {
			return "", false
		}
		setting, ok := t.literal(args[0])
		if !ok {
			return "", false
		}
		for k, v := range t.sess.parameters() {
			if strings.EqualFold(k, setting) {
				return sqlLiteral(v), true
			}
		}
		if len(args) == 2 && strings.EqualFold(strings.TrimSpace(t.arg(args[1])), "true") {
			return "CAST(NULL AS VARCHAR)", true
		}
		t.fail(&pgError{code: "42704", msg: fmt.Sprintf("unrecognized configuration parameter %q", setting)})
		return "", true
	case "current_schema":
		return "'public'", len(args) == 0
	case "current_schemas":
		if len(args) != 1 {
			return "", false
		}
		implicit, explicit := "['pg_catalog', 'public']", "['public']"
		switch strings.ToLower(strings.TrimSpace(t.arg(args[0]))) {
		case "true", "'t'":
			return implicit, true
		case "false", "'f'":
			return explicit, true
		}
		return fmt.Sprintf("(CASE WHEN %s THEN %s ELSE %s END)", t.arg(args[0]), implicit, explicit), true
	case "current_database":
		return sqlLiteral(t.sess.database), len(args) == 0
	case "quote_ident":
		if len(args) != 1 {
			return "", false
		}
		x := "(" + t.arg(args[0]) + ")"
		return fmt.Sprintf(`(CASE WHEN regexp_full_match(%[1]s, '[a-z_][a-z0-9_$]*') AND %[1]s NOT IN (%[2]s) THEN %[1]s ELSE '"' || replace(%[1]s, '"', '""') || '"' END)`,
			x, keywordList), true
	case "parse_ident":
		if len(args) != 1 {
			return "", false
		}
		s, ok := t.literal(args[0])
		if !ok {
			return "", false
		}
		parts, err := parseIdent(s)
		if err != nil {
			t.fail(&pgError{code: "22023", msg: err.Error()})
			return "", true
		}
		return sqlLiteral(parts), true
	case "array_lower", "array_upper":
		if len(args) != 2 || strings.TrimSpace(t.arg(args[1])) != "1" {
			return "", false
		}
		x := t.arg(args[0])
		if name == "array_lower" {
			return fmt.Sprintf("(CASE WHEN len(%s) > 0 THEN 1 END)", x), true
		}
		return fmt.Sprintf("(CASE WHEN len(%s) > 0 THEN len(%s) END)", x, x), true
	case "_pg_expandarray":
		if len(args) != 1 {
			return "", false
		}
		return fmt.Sprintf("unnest(list_transform(%s, lambda v, k: {'x': v, 'n': k}))", t.arg(args[0])), true
	case "format_type":
		if len(args) != 2 {
			return "", false
		}
		return formatTypeSQL("("+t.arg(args[0])+")", "("+t.arg(args[1])+")"), true
	case "pg_cancel_backend":
		if len(args) != 1 {
			return "", false
		}
		return t.cancelBackendCall(t.arg(args[0]))
	case "pg_get_userbyid":
		// Every object of the catalog is owned by the session's user.
		return sqlLiteral(t.sess.user), len(args) == 1
	case "pg_get_serial_sequence":
		return "CAST(NULL AS VARCHAR)", len(args) == 2 // no column is serial
	case "pg_get_expr":
		// No relation served has defaults, partition bounds or index expressions.
		return "CAST(NULL AS VARCHAR)", len(args) == 2 || len(args) == 3
	case "pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible":
		// Every relation, type and function served is on the search path.
		return "true", len(args) == 1
	case "pg_encoding_to_char":
		return fmt.Sprintf("(CASE WHEN %s = 6 THEN 'UTF8' ELSE '' END)", t.arg(args[0])), len(args) == 1
	case "to_regtype":
		if len(args) != 1 {
			return "", false
		}
		return toRegtypeSQL("(" + t.arg(args[0]) + ")"), true
	case "pg_get_indexdef", "pg_get_constraintdef":
		// The catalog has no indexes or constraints, and PostgreSQL answers
		// NULL for an oid that is none.
		return "CAST(NULL AS VARCHAR)", true
	}
	return "", false
}

// keepParams makes a translated call out of the call's arguments at tokens
// lo..hi still reference each $n parameter they did: a call answered without
// its arguments (pg_get_constraintdef(oid, $1) is NULL) would otherwise leave
// a bound parameter the statement no longer has, which DuckDB refuses.
func (t *translator) keepParams(lo, hi int, out string) string {
	kept := map[string]bool{}
	for _, tok := range tokenize(out) {
		if tok.kind == tokParam {
			kept[tok.text] = true
		}
	}
	var refs []string
	for _, tok := range t.toks[lo:hi] {
		if tok.kind == tokParam && !kept[tok.text] {
			kept[tok.text] = true
			refs = append(refs, "CAST("+tok.text+" AS VARCHAR) IS NULL")
		}
	}
	if len(refs) == 0 {
		return out
	}
	return fmt.Sprintf("(CASE WHEN false AND (%s) THEN NULL ELSE %s END)", strings.Join(refs, " OR "), out)
}

// regCast is CAST(x AS regclass) and its kin, like x::regclass: the oid
// itself, resolved as PostgreSQL does for a literal name.
func (t *translator) regCast(args []span) (string, bool) {
	if len(args) != 1 {
		return "", false
	}
	lo, hi := args[0].lo, args[0].hi
	typ := hi - 1
	if typ-lo < 2 || !regTypes[t.toks[typ].word()] {
		return "", false
	}
	as := typ - 1
	if as-lo >= 3 && t.toks[as].text == "." && t.toks[as-1].is("pg_catalog") {
		as -= 2
	}
	if !t.toks[as].is("as") || as == lo {
		return "", false
	}
	if as-lo == 1 && t.toks[lo].kind == tokString {
		return t.regLiteral(t.toks[lo].stringValue(), t.toks[typ].word())
	}
	if as-lo == 1 && t.toks[lo].kind == tokParam {
		if out, ok := t.regParam(t.toks[lo].text, t.toks[typ].word()); ok {
			return out, true
		}
	}
	return "(" + t.emit(lo, as) + ")", true
}

// regParam is $n::regclass or $n::regtype (and CAST($n AS …)): the bound
// value is a name or an oid in text, resolved when the statement runs, as
// PostgreSQL's input functions of those types do — SQLAlchemy binds the
// catalog relation's name it compares pg_description.classoid with. A name
// the catalog lacks is PostgreSQL's error, not an oid matching nothing.
func (t *translator) regParam(param, typ string) (string, bool) {
	x := "CAST(" + param + " AS VARCHAR)"
	var known string
	switch typ {
	case "regclass":
		c := t.catalog()
		if c == nil {
			return "", false
		}
		known = regclassSQL(c, x)
	case "regtype":
		known = toRegtypeSQL(x)
	default:
		return "", false
	}
	kind := map[string]string{"regclass": "relation", "regtype": "type"}[typ]
	return fmt.Sprintf(`coalesce(%s, TRY_CAST(%s AS INTEGER), error('%s "' || %s || '" does not exist'))`, known, x, kind, x), true
}

// regclassSQL is the oid of a relation of the session or of the catalog named
// by the text expression x, as (*pgCatalog).regclass resolves a literal name;
// NULL for any other name.
func regclassSQL(c *pgCatalog, x string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `(CASE replace(%s, '"', '')`, x)
	for _, r := range c.rels {
		fmt.Fprintf(&b, " WHEN %s THEN %d WHEN %s THEN %d", sqlLiteral(r.name), r.oid, sqlLiteral("public."+r.name), r.oid)
	}
	names := make([]string, 0, len(catalogRelationOIDs))
	for n := range catalogRelationOIDs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		o := catalogRelationOIDs[n]
		fmt.Fprintf(&b, " WHEN %s THEN %d WHEN %s THEN %d", sqlLiteral(n), o, sqlLiteral("pg_catalog."+n), o)
	}
	b.WriteString(" END)")
	return b.String()
}

// toRegtypeSQL is to_regtype(name): the oid of a type of pg_type by any of
// its names, NULL for any other name (psycopg and SQLAlchemy look types up
// by name on connect, with the name as a parameter).
func toRegtypeSQL(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(CASE regexp_replace(lower(trim(%s)), '^pg_catalog\\.', '')", name)
	seen := map[string]bool{}
	add := func(n string, oid uint32) {
		if !seen[n] {
			seen[n] = true
			fmt.Fprintf(&b, " WHEN %s THEN %d", sqlLiteral(n), oid)
		}
	}
	for _, t := range pgTypes { // typnames first: format_type spells some of them alike
		add(t.name, t.oid)
		add("_"+t.name, t.array)
	}
	for _, t := range pgTypes {
		add(formatType(t.oid, -1), t.oid)
		add(formatType(t.oid, -1)+"[]", t.array)
	}
	for n := range typeAliases {
		add(n, typeAliases[n])
	}
	b.WriteString(" END)")
	return b.String()
}

// formatTypeSQL is format_type(typ, mod) as an expression over the types of pg_type.
func formatTypeSQL(typ, mod string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(CASE WHEN %[1]s IS NULL THEN NULL ELSE (CASE CAST(%[1]s AS BIGINT)", typ)
	for _, t := range pgTypes {
		name := formatType(t.oid, -1)
		switch t.oid {
		case 18:
			name = `"char"`
		case 19:
			name = "name"
		case 1042:
			name = "character"
		case 1043:
			name = "character varying"
		}
		if t.oid == oidNumeric {
			fmt.Fprintf(&b, " WHEN %d THEN (CASE WHEN %[2]s >= 4 THEN 'numeric(' || CAST((%[2]s - 4) >> 16 AS VARCHAR) || ',' || CAST((%[2]s - 4) & 65535 AS VARCHAR) || ')' ELSE 'numeric' END)", t.oid, mod)
		} else {
			fmt.Fprintf(&b, " WHEN %d THEN %s", t.oid, sqlLiteral(name))
		}
		fmt.Fprintf(&b, " WHEN %d THEN %s", t.array, sqlLiteral(name+"[]"))
	}
	b.WriteString(" ELSE '???' END) END)")
	return b.String()
}

// parseIdent is PostgreSQL's parse_ident: dot-separated names, unquoted ones
// folded to lower case.
func parseIdent(s string) ([]string, error) {
	invalid := fmt.Errorf("string is not a valid identifier: %q", s)
	var parts []string
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		var part strings.Builder
		if i < len(s) && s[i] == '"' {
			closed := false
			for i++; i < len(s) && !closed; i++ {
				switch {
				case s[i] != '"':
					part.WriteByte(s[i])
				case i+1 < len(s) && s[i+1] == '"':
					part.WriteByte('"')
					i++
				default:
					closed = true
				}
			}
			if !closed || part.Len() == 0 {
				return nil, invalid
			}
			parts = append(parts, part.String())
		} else {
			for i < len(s) && s[i] != '.' && s[i] != ' ' {
				part.WriteByte(s[i])
				i++
			}
			if part.Len() == 0 {
				return nil, invalid
			}
			parts = append(parts, strings.ToLower(part.String()))
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return parts, nil
		}
		if s[i] != '.' {
			return nil, invalid
		}
		i++
	}
}

// keywordList is PostgreSQL's keywords that quote_ident quotes (every category
// but unreserved), as an SQL list.
var keywordList = func() string {
	words := strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check collate column
		constraint create current_catalog current_date current_role current_time current_timestamp current_user default
		deferrable desc distinct do else end except false fetch for foreign from grant group having in initially intersect
		into lateral leading limit localtime localtimestamp not null offset on only or order placing primary references
		returning select session_user some symmetric table then to trailing true union unique user using variadic when
		where window with
		authorization binary collation concurrently cross current_schema freeze full ilike inner is isnull join left like
		natural notnull outer overlaps right similar tablesample verbose
		between bigint bit boolean char character coalesce dec decimal exists extract float greatest grouping inout int
		integer interval least national nchar none normalize nullif numeric out overlay position precision real row setof
		smallint substring time timestamp treat trim values varchar xmlattributes xmlconcat xmlelement xmlexists xmlforest
		xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable`)
	for i, w := range words {
		words[i] = "'" + w + "'"
	}
	return strings.Join(words, ", ")
}()
