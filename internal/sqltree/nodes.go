package sqltree

import (
	"fmt"
	"maps"
	"slices"
)

// Root is what json_serialize_sql returns: the statements, or DuckDB's
// refusal (Error, with its type and message).
type Root struct {
	Error                   bool
	ErrorType, ErrorMessage string
	Statements              []*Statement
	Rest                    Fields
}

// Statement is one statement, or the query of a subquery: a query node and
// its named parameters.
type Statement struct {
	Node Node
	Rest Fields // named_param_map
}

// SelectNode is one SELECT … FROM … WHERE … level of a query.
type SelectNode struct {
	SelectList       []Node
	From             Node
	Where            Node // nil: no WHERE
	GroupExpressions []Node
	Having, Qualify  Node
	Modifiers        []Node // ORDER BY, LIMIT, DISTINCT
	Rest             Fields // cte_map, group_sets, aggregate_handling, sample, …
}

// BaseTable is a named relation in a FROM clause.
type BaseTable struct {
	TableName, SchemaName, CatalogName, Alias string
	Rest                                      Fields // column_name_alias, at_clause, sample, query_location
}

// Name is what the statement calls the relation: its alias, else its name.
func (t *BaseTable) Name() string {
	if t.Alias != "" {
		return t.Alias
	}
	return t.TableName
}

// TableFunction is a function call in a FROM clause (range(…), read_parquet(…)).
type TableFunction struct {
	Function Node // a *Function
	Alias    string
	Rest     Fields
}

// SubqueryRef is a parenthesised query in a FROM clause.
type SubqueryRef struct {
	Subquery *Statement
	Alias    string
	Rest     Fields // column_name_alias, sample, query_location
}

// Join is a join of two table references.
type Join struct {
	Left, Right Node
	Condition   Node
	Rest        Fields // join type, ref type, using columns, …
}

// EmptyRef is the FROM of a SELECT without one.
type EmptyRef struct{ Rest Fields }

// SubqueryExpr is a query used as a value (IN, EXISTS, a scalar subquery).
type SubqueryExpr struct {
	Subquery *Statement
	Rest     Fields
}

// Comparison is left op right; Op is DuckDB's expression type (COMPARE_EQUAL, …).
type Comparison struct {
	Op          string
	Left, Right Node
	Rest        Fields
}

// Conjunction is AND or OR (Op CONJUNCTION_AND, CONJUNCTION_OR) over its children.
type Conjunction struct {
	Op       string
	Children []Node
	Rest     Fields
}

// Between is input BETWEEN lower AND upper.
type Between struct {
	Input, Lower, Upper Node
	Rest                Fields
}

// Cast is CAST(child AS type) or TRY_CAST.
type Cast struct {
	Child   Node
	Type    *Object // cast_type: id, type_info
	TryCast bool
	Alias   string
	Rest    Fields
}

// TypeID is the target type's name (VARCHAR, TIMESTAMP WITH TIME ZONE, …).
func (c *Cast) TypeID() string { s, _ := c.Type.Get("id").(string); return s }

// ColumnRef is a column name, qualified or not.
type ColumnRef struct {
	Names []string
	Alias string
	Rest  Fields
}

// Constant is a literal.
type Constant struct {
	Value *Object // type, is_null, value
	Alias string
	Rest  Fields
}

// IsNull reports a NULL literal.
func (c *Constant) IsNull() bool { b, _ := c.Value.Get("is_null").(bool); return b }

// TypeID is the literal's type name (VARCHAR, INTEGER, …).
func (c *Constant) TypeID() string {
	t, _ := c.Value.Get("type").(*Object)
	if t == nil {
		return ""
	}
	s, _ := t.Get("id").(string)
	return s
}

// Parameter is a prepared-statement parameter ($1, ?); Identifier is its number or name.
type Parameter struct {
	Identifier string
	Rest       Fields
}

// Function is a function call.
type Function struct {
	Name, Schema, Catalog string
	Children              []Node
	Distinct              bool
	Alias                 string
	Rest                  Fields // order_bys, filter, export_state, is_operator, query_location
}

// typed turns an object into its modelled kind, or an Object.
func typed(fs Fields) (Node, error) {
	class, _ := fs["class"].(string)
	typ, _ := fs["type"].(string)
	d := &decoder{fs: fs}
	var n Node
	switch class {
	case "":
		switch {
		case typ == "SELECT_NODE":
			d.take("type")
			n = &SelectNode{SelectList: d.list("select_list"), From: d.node("from_table"), Where: d.node("where_clause"),
				GroupExpressions: d.list("group_expressions"), Having: d.node("having"), Qualify: d.node("qualify"),
				Modifiers: d.list("modifiers")}
		case typ == "BASE_TABLE":
			d.take("type")
			n = &BaseTable{TableName: d.str("table_name"), SchemaName: d.str("schema_name"), CatalogName: d.str("catalog_name"), Alias: d.str("alias")}
		case typ == "TABLE_FUNCTION":
			d.take("type")
			n = &TableFunction{Function: d.node("function"), Alias: d.str("alias")}
		case typ == "SUBQUERY":
			d.take("type")
			n = &SubqueryRef{Subquery: d.statement("subquery"), Alias: d.str("alias")}
		case typ == "JOIN":
			d.take("type")
			n = &Join{Left: d.node("left"), Right: d.node("right"), Condition: d.node("condition")}
		case typ == "EMPTY":
			d.take("type")
			n = &EmptyRef{}
		}
	case "SUBQUERY":
		n = &SubqueryExpr{Subquery: d.statement("subquery")}
	case "COMPARISON":
		d.take("class")
		n = &Comparison{Op: d.str("type"), Left: d.node("left"), Right: d.node("right")}
	case "CONJUNCTION":
		d.take("class")
		n = &Conjunction{Op: d.str("type"), Children: d.list("children")}
	case "BETWEEN":
		n = &Between{Input: d.node("input"), Lower: d.node("lower"), Upper: d.node("upper")}
	case "CAST":
		n = &Cast{Child: d.node("child"), Type: d.object("cast_type"), TryCast: d.boolean("try_cast"), Alias: d.str("alias")}
	case "COLUMN_REF":
		n = &ColumnRef{Names: d.strs("column_names"), Alias: d.str("alias")}
	case "CONSTANT":
		n = &Constant{Value: d.object("value"), Alias: d.str("alias")}
	case "PARAMETER":
		n = &Parameter{Identifier: d.str("identifier")}
	case "FUNCTION":
		n = &Function{Name: d.str("function_name"), Schema: d.str("schema"), Catalog: d.str("catalog"),
			Children: d.list("children"), Distinct: d.boolean("distinct"), Alias: d.str("alias")}
	}
	if d.err != nil {
		return nil, fmt.Errorf("%s %s: %w", class, typ, d.err)
	}
	if n == nil {
		return &Object{Fields: fs}, nil
	}
	setRest(n, d.fs)
	return n, nil
}

func setRest(n Node, rest Fields) {
	switch x := n.(type) {
	case *SelectNode:
		x.Rest = rest
	case *BaseTable:
		x.Rest = rest
	case *TableFunction:
		x.Rest = rest
	case *SubqueryRef:
		x.Rest = rest
	case *Join:
		x.Rest = rest
	case *EmptyRef:
		x.Rest = rest
	case *SubqueryExpr:
		x.Rest = rest
	case *Comparison:
		x.Rest = rest
	case *Conjunction:
		x.Rest = rest
	case *Between:
		x.Rest = rest
	case *Cast:
		x.Rest = rest
	case *ColumnRef:
		x.Rest = rest
	case *Constant:
		x.Rest = rest
	case *Parameter:
		x.Rest = rest
	case *Function:
		x.Rest = rest
	}
}

// decoder takes the modelled fields out of an object, leaving the rest; the
// first field of an unexpected JSON type is its error.
type decoder struct {
	fs  Fields
	err error
}

func (d *decoder) take(key string) (any, bool) {
	v, ok := d.fs[key]
	if !ok && d.err == nil {
		d.err = fmt.Errorf("field %s missing", key)
	}
	delete(d.fs, key)
	return v, ok
}

func (d *decoder) fail(key string, v any) {
	if d.err == nil {
		d.err = fmt.Errorf("field %s: unexpected %T", key, v)
	}
}

func (d *decoder) str(key string) string {
	v, _ := d.take(key)
	s, ok := v.(string)
	if !ok {
		d.fail(key, v)
	}
	return s
}

func (d *decoder) boolean(key string) bool {
	v, _ := d.take(key)
	b, ok := v.(bool)
	if !ok {
		d.fail(key, v)
	}
	return b
}

func (d *decoder) node(key string) Node {
	v, _ := d.take(key)
	if v == nil {
		return nil
	}
	n, ok := v.(Node)
	if !ok {
		d.fail(key, v)
	}
	return n
}

func (d *decoder) object(key string) *Object {
	v, _ := d.take(key)
	o, ok := v.(*Object)
	if !ok {
		d.fail(key, v)
	}
	return o
}

func (d *decoder) list(key string) []Node {
	v, _ := d.take(key)
	xs, ok := v.([]any)
	if !ok {
		d.fail(key, v)
		return nil
	}
	out := make([]Node, len(xs))
	for i, x := range xs {
		if out[i], ok = x.(Node); !ok {
			d.fail(key, x)
		}
	}
	return out
}

func (d *decoder) strs(key string) []string {
	v, _ := d.take(key)
	xs, ok := v.([]any)
	if !ok {
		d.fail(key, v)
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		if out[i], ok = x.(string); !ok {
			d.fail(key, x)
		}
	}
	return out
}

// statement reads a {"node": …, "named_param_map": …} object.
func (d *decoder) statement(key string) *Statement {
	o := d.object(key)
	if o == nil {
		return nil
	}
	return d.asStatement(key, o)
}

func (d *decoder) asStatement(key string, o *Object) *Statement {
	rest := maps.Clone(o.Fields)
	n, ok := rest["node"].(Node)
	if !ok {
		d.fail(key+".node", rest["node"])
	}
	delete(rest, "node")
	return &Statement{Node: n, Rest: rest}
}

func (d *decoder) statements(key string) []*Statement {
	v, _ := d.take(key)
	xs, ok := v.([]any)
	if !ok {
		d.fail(key, v)
		return nil
	}
	out := make([]*Statement, len(xs))
	for i, x := range xs {
		o, ok := x.(*Object)
		if !ok {
			d.fail(key, x)
			continue
		}
		out[i] = d.asStatement(key, o)
	}
	return out
}

func sortedKeys(fs Fields) []string { return slices.Sorted(maps.Keys(fs)) }

// root reads the top-level object.
func root(fs Fields) (*Root, error) {
	d := &decoder{fs: fs}
	r := &Root{Error: d.boolean("error")}
	if r.Error {
		r.ErrorType, _ = d.fs["error_type"].(string)
		r.ErrorMessage, _ = d.fs["error_message"].(string)
	} else {
		r.Statements = d.statements("statements")
	}
	r.Rest = d.fs
	return r, d.err
}
