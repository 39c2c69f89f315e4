package sqltree

// Nodes the planner makes itself, spelled as DuckDB serializes them, with the
// location of a node it did not parse.

func exprRest(class, typ string) Fields {
	return Fields{"class": class, "type": typ, "query_location": LocationUnknown}
}

func logicalType(id string) *Object { return &Object{Fields: Fields{"id": id, "type_info": nil}} }

// NewCast is CAST(child AS typeID), or TRY_CAST.
func NewCast(child Node, typeID string, try bool) *Cast {
	return &Cast{Child: child, Type: logicalType(typeID), TryCast: try, Rest: exprRest("CAST", "OPERATOR_CAST")}
}

// NewNull is the literal NULL.
func NewNull() *Constant {
	return &Constant{Value: &Object{Fields: Fields{"type": logicalType("NULL"), "is_null": true}}, Rest: exprRest("CONSTANT", "VALUE_CONSTANT")}
}

// NewString is a VARCHAR literal.
func NewString(s string) *Constant {
	return &Constant{Value: &Object{Fields: Fields{"type": logicalType("VARCHAR"), "is_null": false, "value": s}},
		Rest: exprRest("CONSTANT", "VALUE_CONSTANT")}
}

// NewParameter is the prepared-statement parameter $id (a number or a name).
func NewParameter(id string) *Parameter {
	rest := exprRest("PARAMETER", "VALUE_PARAMETER")
	rest["alias"] = ""
	return &Parameter{Identifier: id, Rest: rest}
}

// NewColumnRef is a column reference, qualified when names has two parts.
func NewColumnRef(names ...string) *ColumnRef {
	return &ColumnRef{Names: names, Rest: exprRest("COLUMN_REF", "COLUMN_REF")}
}

// NewFunction is a plain call name(args…).
func NewFunction(name string, args ...Node) *Function {
	rest := exprRest("FUNCTION", "FUNCTION")
	rest["export_state"] = false
	rest["filter"] = nil
	rest["is_operator"] = false
	rest["order_bys"] = &Object{Fields: Fields{"orders": []any{}, "type": "ORDER_MODIFIER"}}
	return &Function{Name: name, Children: args, Rest: rest}
}

// StringValue is the text of a VARCHAR literal; ok is false for any other.
func (c *Constant) StringValue() (s string, ok bool) {
	if c.IsNull() || c.TypeID() != "VARCHAR" {
		return "", false
	}
	s, ok = c.Value.Get("value").(string)
	return s, ok
}

// AsSubqueryRef is a FROM-clause subquery under alias holding st, in the place
// of ref: it keeps ref's column aliases, TABLESAMPLE and source position.
func AsSubqueryRef(ref Node, alias string, st *Statement) *SubqueryRef {
	var rest Fields
	switch x := ref.(type) {
	case *BaseTable:
		rest = x.Rest
	case *TableFunction:
		rest = x.Rest
	}
	colAlias := rest["column_name_alias"]
	if colAlias == nil {
		colAlias = []any{}
	}
	return &SubqueryRef{Subquery: st, Alias: alias,
		Rest: Fields{"sample": rest["sample"], "query_location": rest["query_location"], "column_name_alias": colAlias}}
}

// NewComparison is left op right, op DuckDB's expression type (COMPARE_EQUAL, …).
func NewComparison(op string, left, right Node) *Comparison {
	rest := exprRest("COMPARISON", op)
	rest["alias"] = ""
	return &Comparison{Op: op, Left: left, Right: right, Rest: rest}
}

// NewAnd is the conjunction of terms.
func NewAnd(terms ...Node) *Conjunction {
	rest := exprRest("CONJUNCTION", "CONJUNCTION_AND")
	rest["alias"] = ""
	return &Conjunction{Op: "CONJUNCTION_AND", Children: terms, Rest: rest}
}
