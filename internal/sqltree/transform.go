package sqltree

import "strings"

// Func rewrites one node: it returns the node to put in its place and whether
// that differs from n. s is the scope the node is in.
type Func func(n Node, s Scope) (Node, bool, error)

// Transform rewrites the tree below and including n with f, children before
// their parent, in the order of the statement's text (a select node's CTEs,
// then its select list, FROM, WHERE, …), and reports whether anything changed.
func Transform(n Node, f Func) (Node, bool, error) {
	return transform(n, Scope{}, f, false)
}

// TransformLevel is Transform confined to one query level: it does not
// descend into the query nodes and subquery expressions below n, whose
// columns belong to another level (n itself may be one).
func TransformLevel(n Node, f Func) (Node, bool, error) {
	return transform(n, Scope{}, f, true)
}

func transform(n Node, s Scope, f Func, level bool) (Node, bool, error) {
	s = s.enter(n)
	changed := false
	err := n.rewrite(func(c Node) (Node, error) {
		if level && opensLevel(c) {
			return c, nil
		}
		out, ch, err := transform(c, s, f, level)
		changed = changed || ch
		return out, err
	})
	if err != nil {
		return n, changed, err
	}
	out, ch, err := f(n, s)
	return out, changed || ch, err
}

// Inspect visits the tree below and including n, parents before their
// children, in the order of the statement's text; when f returns false the
// node's children are skipped.
func Inspect(n Node, f func(n Node, s Scope) bool) {
	var visit func(n Node, s Scope)
	visit = func(n Node, s Scope) {
		s = s.enter(n)
		if !f(n, s) {
			return
		}
		_ = n.rewrite(func(c Node) (Node, error) {
			visit(c, s)
			return c, nil
		})
	}
	visit(n, Scope{})
}

// opensLevel reports a node whose columns are another query level's.
func opensLevel(n Node) bool {
	switch x := n.(type) {
	case *SelectNode, *SubqueryExpr, *Statement:
		return true
	case *Object:
		t, _ := x.Get("type").(string)
		return strings.HasSuffix(t, "_NODE") // set operations, CTE and recursive CTE nodes
	}
	return false
}

// Scope is what a node can see of the statement around it: the names of the
// common table expressions defined by the query nodes above it (and by
// itself). A CTE named like a relation shadows it, as in DuckDB's binder.
type Scope struct{ ctes *cteScope }

type cteScope struct {
	name string // lower case
	up   *cteScope
}

// IsCTE reports whether name is a CTE in scope.
func (s Scope) IsCTE(name string) bool {
	name = strings.ToLower(name)
	for c := s.ctes; c != nil; c = c.up {
		if c.name == name {
			return true
		}
	}
	return false
}

// enter is the scope inside n: its own CTEs added.
func (s Scope) enter(n Node) Scope {
	for _, name := range cteNames(n) {
		s.ctes = &cteScope{name: strings.ToLower(name), up: s.ctes}
	}
	return s
}

// cteNames lists the CTEs a query node defines (its cte_map).
func cteNames(n Node) []string {
	var rest Fields
	switch x := n.(type) {
	case *SelectNode:
		rest = x.Rest
	case *Object:
		rest = x.Fields
	default:
		return nil
	}
	cm, _ := rest["cte_map"].(*Object)
	if cm == nil {
		return nil
	}
	entries, _ := cm.Get("map").([]any)
	var out []string
	for _, e := range entries {
		if en, ok := e.(*Object); ok {
			if k, ok := en.Get("key").(string); ok {
				out = append(out, k)
			}
		}
	}
	return out
}
