package pgwire

import "strings"

// PostgreSQL names a result column without an alias after what the select-list
// item is (FigureColname): a function call by the function (count(*) is
// "count", sum(value) "sum"), a column by the column, a cast by what it casts
// or else by the type (value::text is "value", 1::int "int4"), CASE by "case",
// anything else "?column?". DuckDB names it by the expression's text
// ("count_star()", "sum(\"value\")", "CAST(\"value\" AS VARCHAR)"), and a
// client that looks a column up by name — a BI tool's field list, a dashboard
// keyed on "count", psycopg's dict rows — finds nothing. pgColumnNames renames
// the columns of a statement's first select list the way PostgreSQL would; a
// list it cannot map item by item to the columns (a *, a mismatch) keeps
// DuckDB's names.

// pgSpecialNames are the keyword-functions FigureColname names by themselves.
var pgSpecialNames = map[string]bool{
	"coalesce": true, "greatest": true, "least": true, "nullif": true, "exists": true, "array": true, "row": true,
	"current_date": true, "current_time": true, "current_timestamp": true, "localtime": true, "localtimestamp": true,
	"current_user": true, "session_user": true, "user": true, "current_role": true, "current_catalog": true,
	"current_schema": true, "extract": true, "position": true, "substring": true, "overlay": true, "trim": true,
}

// pgTypeNames maps a type name as written to PostgreSQL's internal name, which
// a cast of a constant is named by.
var pgTypeNames = map[string]string{
	"int": "int4", "integer": "int4", "smallint": "int2", "bigint": "int8", "real": "float4", "float": "float8",
	"double": "float8", "decimal": "numeric", "boolean": "bool", "varchar": "varchar", "char": "bpchar",
	"character": "bpchar", "timestamptz": "timestamptz", "timestamp": "timestamp", "date": "date", "text": "text",
	"numeric": "numeric", "interval": "interval", "time": "time", "json": "json", "jsonb": "jsonb", "uuid": "uuid",
	"bytea": "bytea", "int2": "int2", "int4": "int4", "int8": "int8", "float4": "float4", "float8": "float8", "bool": "bool",
}

func pgColumnNames(q string, cols []pgColumn) []pgColumn {
	toks := tokenize(q)
	items := firstSelectList(toks)
	if items == nil || len(items) != len(cols) {
		return cols
	}
	out := append([]pgColumn(nil), cols...)
	for i, it := range items {
		item := toks[it.lo:it.hi]
		if len(item) == 0 || isStar(item) {
			return cols
		}
		if hasAlias(item) {
			continue
		}
		out[i].name = figureColname(item)
	}
	return out
}

// firstSelectList splits the select list of the statement's first top-level
// SELECT (after any WITH) into its items; nil if there is none.
func firstSelectList(toks []token) []span {
	depth, start := 0, -1
	for i, t := range toks {
		switch {
		case t.text == "(" || t.text == "[":
			depth++
		case t.text == ")" || t.text == "]":
			depth--
		case depth == 0 && t.is("select"):
			start = i + 1
		}
		if start >= 0 {
			break
		}
	}
	if start < 0 {
		return nil
	}
	if start < len(toks) && (toks[start].is("distinct") || toks[start].is("all")) {
		start++
		if start < len(toks) && toks[start].is("on") && start+1 < len(toks) && toks[start+1].text == "(" {
			return nil
		}
	}
	var items []span
	depth, lo := 0, start
	for j := start; j < len(toks); j++ {
		t := toks[j]
		switch {
		case t.text == "(" || t.text == "[":
			depth++
		case t.text == ")" || t.text == "]":
			depth--
			if depth < 0 {
				return append(items, span{lo, j})
			}
		case depth == 0 && t.text == ",":
			items = append(items, span{lo, j})
			lo = j + 1
		case depth == 0 && t.text == ";":
			return append(items, span{lo, j})
		case depth == 0 && t.kind == tokWord && endsSelectList[t.word()]:
			return append(items, span{lo, j})
		}
	}
	return append(items, span{lo, len(toks)})
}

var endsSelectList = map[string]bool{
	"from": true, "where": true, "group": true, "having": true, "order": true, "limit": true, "offset": true,
	"union": true, "intersect": true, "except": true, "window": true, "fetch": true, "into": true, "qualify": true,
}

func isStar(item []token) bool {
	last := item[len(item)-1]
	return last.text == "*" && (len(item) == 1 || item[len(item)-2].text == ".")
}

// hasAlias: the item ends in AS name, or in a bare name after an expression
// (count(*) n, tenant t).
func hasAlias(item []token) bool {
	n := len(item)
	if n < 2 {
		return false
	}
	last, prev := item[n-1], item[n-2]
	if last.kind != tokWord && last.kind != tokQuoted {
		return false
	}
	if prev.is("as") {
		return true
	}
	if last.kind == tokWord && isReserved(last.word()) {
		return false
	}
	switch prev.kind {
	case tokQuoted, tokString, tokNumber, tokParam:
		return true
	case tokWord:
		return !isReserved(prev.word())
	case tokPunct:
		return prev.text == ")" || prev.text == "]"
	}
	return false
}

var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split(strings.ReplaceAll(keywordList, "'", ""), ", ") {
		m[w] = true
	}
	return m
}()

func isReserved(w string) bool { return reservedWords[strings.ToLower(w)] }

// figureColname is PostgreSQL's name for an unaliased select-list item.
func figureColname(item []token) string {
	if name, ok := colname(item); ok {
		return name
	}
	return "?column?"
}

// colname names an expression; ok is false where PostgreSQL has no name but
// ?column? (an operator, a constant).
func colname(item []token) (string, bool) {
	// A trailing ::type names by the expression before it, else by the type.
	if i := lastTopLevelCast(item); i > 0 {
		if name, ok := colname(item[:i]); ok {
			return name, true
		}
		typ := strings.ToLower(item[i+1].word())
		if t, ok := pgTypeNames[typ]; ok {
			return t, true
		}
		return typ, true
	}
	first := item[0]
	switch {
	case first.is("case") && item[len(item)-1].is("end"):
		return "case", true
	case first.is("cast") && len(item) > 3 && item[1].text == "(" && matchingIn(item, 1) == len(item)-1:
		as := lastTopLevelAs(item[2 : len(item)-1])
		if as < 0 {
			return "", false
		}
		if name, ok := colname(item[2 : 2+as]); ok {
			return name, true
		}
		typ := strings.ToLower(item[2+as+1].word())
		if t, ok := pgTypeNames[typ]; ok {
			return t, true
		}
		return typ, true
	}
	// A column reference: name, or qualifier.name.
	if isColumnRef(item) {
		return item[len(item)-1].word(), true
	}
	// A function call: name(…), schema.name(…), optionally FILTER/OVER after it.
	nameEnd := 0
	for nameEnd+2 < len(item) && item[nameEnd+1].text == "." && (item[nameEnd+2].kind == tokWord || item[nameEnd+2].kind == tokQuoted) {
		nameEnd += 2
	}
	if (first.kind == tokWord || first.kind == tokQuoted) && nameEnd+1 < len(item) && item[nameEnd+1].text == "(" {
		closing := matchingIn(item, nameEnd+1)
		if closing > 0 && (closing == len(item)-1 || item[closing+1].is("filter") || item[closing+1].is("over") ||
			item[closing+1].is("within")) {
			return strings.ToLower(item[nameEnd].word()), true
		}
	}
	if len(item) == 1 && first.kind == tokWord && pgSpecialNames[first.word()] {
		return first.word(), true
	}
	return "", false
}

func isColumnRef(item []token) bool {
	for i, t := range item {
		if i%2 == 0 && t.kind != tokWord && t.kind != tokQuoted {
			return false
		}
		if i%2 == 1 && t.text != "." {
			return false
		}
	}
	if len(item)%2 == 0 {
		return false
	}
	last := item[len(item)-1]
	return last.kind == tokQuoted || !isReserved(last.word()) && !pgSpecialNames[last.word()]
}

// matchingIn is the index of the bracket closing the one at open, or -1.
func matchingIn(item []token, open int) int {
	depth := 0
	for j := open; j < len(item); j++ {
		switch item[j].text {
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

// lastTopLevelCast is the index of a :: that is followed by exactly one type
// word ending the item, at depth 0; -1 if none.
func lastTopLevelCast(item []token) int {
	n := len(item)
	if n >= 3 && item[n-2].text == "::" && item[n-1].kind == tokWord {
		return n - 2
	}
	return -1
}

// lastTopLevelAs is the index of the AS of CAST(x AS type) at depth 0, or -1.
func lastTopLevelAs(inner []token) int {
	depth, at := 0, -1
	for j, t := range inner {
		switch {
		case t.text == "(" || t.text == "[":
			depth++
		case t.text == ")" || t.text == "]":
			depth--
		case depth == 0 && t.is("as"):
			at = j
		}
	}
	if at < 0 || at+1 >= len(inner) {
		return -1
	}
	return at
}
