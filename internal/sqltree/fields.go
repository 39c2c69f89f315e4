package sqltree

// with returns rest plus the modelled fields kv (key, value pairs).
func with(rest Fields, kv ...any) Fields {
	out := make(Fields, len(rest)+len(kv)/2)
	for k, v := range rest {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// nodeOrNil keeps a nil child a JSON null.
func nodeOrNil(n Node) any {
	if n == nil {
		return nil
	}
	return n
}

func strsValue(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func (r *Root) fields() Fields {
	if r.Error {
		return with(r.Rest, "error", true)
	}
	sts := make([]any, len(r.Statements))
	for i, s := range r.Statements {
		sts[i] = s
	}
	return with(r.Rest, "error", false, "statements", sts)
}

func (r *Root) rewrite(f func(Node) (Node, error)) error {
	for _, s := range r.Statements {
		if err := s.rewrite(f); err != nil {
			return err
		}
	}
	return rewriteFields(r.Rest, f)
}

func (s *Statement) fields() Fields { return with(s.Rest, "node", nodeOrNil(s.Node)) }

func (s *Statement) rewrite(f func(Node) (Node, error)) error {
	var err error
	if s.Node, err = rewriteNode(s.Node, f); err != nil {
		return err
	}
	return rewriteFields(s.Rest, f)
}

func (s *SelectNode) fields() Fields {
	return with(s.Rest, "type", "SELECT_NODE", "select_list", s.SelectList, "from_table", nodeOrNil(s.From),
		"where_clause", nodeOrNil(s.Where), "group_expressions", s.GroupExpressions, "having", nodeOrNil(s.Having),
		"qualify", nodeOrNil(s.Qualify), "modifiers", s.Modifiers)
}

func (s *SelectNode) rewrite(f func(Node) (Node, error)) error {
	// CTE definitions first: they come before the body in the text.
	if err := rewriteFields(s.Rest, f); err != nil {
		return err
	}
	if err := rewriteList(s.SelectList, f); err != nil {
		return err
	}
	var err error
	for _, slot := range []*Node{&s.From, &s.Where} {
		if *slot, err = rewriteNode(*slot, f); err != nil {
			return err
		}
	}
	if err := rewriteList(s.GroupExpressions, f); err != nil {
		return err
	}
	for _, slot := range []*Node{&s.Having, &s.Qualify} {
		if *slot, err = rewriteNode(*slot, f); err != nil {
			return err
		}
	}
	return rewriteList(s.Modifiers, f)
}

func (t *BaseTable) fields() Fields {
	return with(t.Rest, "type", "BASE_TABLE", "table_name", t.TableName, "schema_name", t.SchemaName,
		"catalog_name", t.CatalogName, "alias", t.Alias)
}

func (t *BaseTable) rewrite(f func(Node) (Node, error)) error { return rewriteFields(t.Rest, f) }

func (t *TableFunction) fields() Fields {
	return with(t.Rest, "type", "TABLE_FUNCTION", "function", nodeOrNil(t.Function), "alias", t.Alias)
}

func (t *TableFunction) rewrite(f func(Node) (Node, error)) error {
	var err error
	if t.Function, err = rewriteNode(t.Function, f); err != nil {
		return err
	}
	return rewriteFields(t.Rest, f)
}

func (t *SubqueryRef) fields() Fields {
	return with(t.Rest, "type", "SUBQUERY", "subquery", t.Subquery, "alias", t.Alias)
}

func (t *SubqueryRef) rewrite(f func(Node) (Node, error)) error {
	if err := t.Subquery.rewrite(f); err != nil {
		return err
	}
	return rewriteFields(t.Rest, f)
}

func (j *Join) fields() Fields {
	return with(j.Rest, "type", "JOIN", "left", nodeOrNil(j.Left), "right", nodeOrNil(j.Right), "condition", nodeOrNil(j.Condition))
}

func (j *Join) rewrite(f func(Node) (Node, error)) error {
	var err error
	for _, slot := range []*Node{&j.Left, &j.Right, &j.Condition} {
		if *slot, err = rewriteNode(*slot, f); err != nil {
			return err
		}
	}
	return rewriteFields(j.Rest, f)
}

func (e *EmptyRef) fields() Fields                           { return with(e.Rest, "type", "EMPTY") }
func (e *EmptyRef) rewrite(f func(Node) (Node, error)) error { return rewriteFields(e.Rest, f) }

func (s *SubqueryExpr) fields() Fields {
	return with(s.Rest, "class", "SUBQUERY", "subquery", s.Subquery)
}

func (s *SubqueryExpr) rewrite(f func(Node) (Node, error)) error {
	if err := rewriteFields(s.Rest, f); err != nil { // the IN's left side
		return err
	}
	return s.Subquery.rewrite(f)
}

func (c *Comparison) fields() Fields {
	return with(c.Rest, "class", "COMPARISON", "type", c.Op, "left", nodeOrNil(c.Left), "right", nodeOrNil(c.Right))
}

func (c *Comparison) rewrite(f func(Node) (Node, error)) error {
	var err error
	for _, slot := range []*Node{&c.Left, &c.Right} {
		if *slot, err = rewriteNode(*slot, f); err != nil {
			return err
		}
	}
	return rewriteFields(c.Rest, f)
}

func (c *Conjunction) fields() Fields {
	return with(c.Rest, "class", "CONJUNCTION", "type", c.Op, "children", c.Children)
}

func (c *Conjunction) rewrite(f func(Node) (Node, error)) error {
	if err := rewriteList(c.Children, f); err != nil {
		return err
	}
	return rewriteFields(c.Rest, f)
}

func (b *Between) fields() Fields {
	return with(b.Rest, "class", "BETWEEN", "input", nodeOrNil(b.Input), "lower", nodeOrNil(b.Lower), "upper", nodeOrNil(b.Upper))
}

func (b *Between) rewrite(f func(Node) (Node, error)) error {
	var err error
	for _, slot := range []*Node{&b.Input, &b.Lower, &b.Upper} {
		if *slot, err = rewriteNode(*slot, f); err != nil {
			return err
		}
	}
	return rewriteFields(b.Rest, f)
}

func (c *Cast) fields() Fields {
	return with(c.Rest, "class", "CAST", "child", nodeOrNil(c.Child), "cast_type", c.Type, "try_cast", c.TryCast, "alias", c.Alias)
}

func (c *Cast) rewrite(f func(Node) (Node, error)) error {
	var err error
	if c.Child, err = rewriteNode(c.Child, f); err != nil {
		return err
	}
	return rewriteFields(c.Rest, f)
}

func (c *ColumnRef) fields() Fields {
	return with(c.Rest, "class", "COLUMN_REF", "column_names", strsValue(c.Names), "alias", c.Alias)
}

func (c *ColumnRef) rewrite(f func(Node) (Node, error)) error { return rewriteFields(c.Rest, f) }

func (c *Constant) fields() Fields {
	return with(c.Rest, "class", "CONSTANT", "value", c.Value, "alias", c.Alias)
}

func (c *Constant) rewrite(f func(Node) (Node, error)) error { return rewriteFields(c.Rest, f) }

func (p *Parameter) fields() Fields {
	return with(p.Rest, "class", "PARAMETER", "identifier", p.Identifier)
}

func (p *Parameter) rewrite(f func(Node) (Node, error)) error { return rewriteFields(p.Rest, f) }

func (fn *Function) fields() Fields {
	return with(fn.Rest, "class", "FUNCTION", "function_name", fn.Name, "schema", fn.Schema, "catalog", fn.Catalog,
		"children", fn.Children, "distinct", fn.Distinct, "alias", fn.Alias)
}

func (fn *Function) rewrite(f func(Node) (Node, error)) error {
	if err := rewriteList(fn.Children, f); err != nil {
		return err
	}
	return rewriteFields(fn.Rest, f)
}
