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
	scopeOf := s.children(n)
	changed := false
	err := n.rewrite(func(c Node) (Node, error) {
		if level && opensLevel(c) {
			return c, nil
		}
		out, ch, err := transform(c, scopeOf(c), f, level)
		changed = changed || ch
		return out, err
	})
	if err != nil {
		return n, changed, err
	}
	out, ch, err := f(n, s.at(n))
	return out, changed || ch, err
}

// Inspect visits the tree below and including n, parents before their
// children, in the order of the statement's text; when f returns false the
// node's children are skipped.
func Inspect(n Node, f func(n Node, s Scope) bool) {
	var visit func(n Node, s Scope)
	visit = func(n Node, s Scope) {
		if !f(n, s.at(n)) {
			return
		}
		scopeOf := s.children(n)
		_ = n.rewrite(func(c Node) (Node, error) {
			visit(c, scopeOf(c))
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
// common table expressions in scope there, as DuckDB's binder has them. A
// query node's CTEs are visible in its body (and in the node itself); the
// definition of one CTE sees those defined before it in the same WITH, never
// itself or a later one — with or without RECURSIVE, DuckDB binds such a name
// to a relation of the catalog or a replacement scan; only the recursive side
// (right) of a recursive CTE node sees the CTE it defines. A CTE named like a
// relation shadows it where it is visible.
type Scope struct {
	ctes *cteScope
	defs bool // the scope of a cte_map: each definition sees the ones before it
}

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

func (s Scope) with(name string) Scope {
	return Scope{ctes: &cteScope{name: strings.ToLower(name), up: s.ctes}}
}

// at is the scope of n itself, met in scope s: its own CTEs added.
func (s Scope) at(n Node) Scope {
	s.defs = false
	names, _ := cteMap(n)
	for _, name := range names {
		s = s.with(name)
	}
	return s
}

// children returns the scope of each child of n, n met in scope s; it is
// called for the children in the order of the statement's text.
func (s Scope) children(n Node) func(c Node) Scope {
	if s.defs {
		// n is a cte_map: each entry sees the entries before it.
		seen := Scope{ctes: s.ctes}
		return func(c Node) Scope {
			inner := seen
			if e, ok := c.(*Object); ok {
				if k, ok := e.Get("key").(string); ok {
					seen = seen.with(k)
				}
			}
			return inner
		}
	}
	body := s.at(n)
	_, defs := cteMap(n)
	var recursive Node
	var self string
	if o, ok := n.(*Object); ok && o.Get("type") == "RECURSIVE_CTE_NODE" {
		recursive, _ = o.Get("right").(Node)
		self, _ = o.Get("cte_name").(string)
	}
	return func(c Node) Scope {
		switch {
		case defs != nil && c == Node(defs):
			return Scope{ctes: s.ctes, defs: true}
		case recursive != nil && c == recursive:
			return body.with(self)
		}
		return body
	}
}

// cteMap lists the CTEs a query node defines and returns its cte_map.
func cteMap(n Node) ([]string, *Object) {
	var rest Fields
	switch x := n.(type) {
	case *SelectNode:
		rest = x.Rest
	case *Object:
		if _, query := x.Get("type").(string); !query {
			return nil, nil
		}
		rest = x.Fields
	default:
		return nil, nil
	}
	cm, _ := rest["cte_map"].(*Object)
	if cm == nil {
		return nil, nil
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
	return out, cm
}
