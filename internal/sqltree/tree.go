// Package sqltree is a typed view of DuckDB's serialized statement
// (json_serialize_sql): the node kinds a planner reads — select node, base
// table, table function, subquery, join, comparison, conjunction, between,
// cast, column reference, constant, parameter, function — as Go types, every
// other object as a generic Object, and one transform over the whole tree.
//
// Decoding keeps everything it does not model untouched: each node carries the
// fields it does not name in Rest, numbers stay json.Number (query_location is
// UINT64_MAX, which a float64 corrupts and json_deserialize_sql then refuses),
// and Encode writes back exactly what was read, plus what a pass changed.
// Objects inside unmodelled fields are still nodes of the tree, so a transform
// reaches a table reference wherever DuckDB put it.
//
//	root, _ := sqltree.Decode(serialized)
//	out, changed, err := sqltree.Transform(root, func(n sqltree.Node, s sqltree.Scope) (sqltree.Node, bool, error) {
//		if t, ok := n.(*sqltree.BaseTable); ok && !s.IsCTE(t.TableName) { … }
//		return n, false, nil
//	})
//	text, _ := sqltree.Encode(out)
package sqltree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Node is one object of the tree.
type Node interface {
	// fields is the object as JSON fields: the modelled ones from the Go
	// fields, the rest as decoded.
	fields() Fields
	// rewrite replaces each child node (in a modelled field, in Rest, in a list)
	// with what f returns for it.
	rewrite(f func(Node) (Node, error)) error
}

// Fields are the fields of an object that its Go type does not model, by
// name. A value is a Node, a []any of values, or a JSON scalar (string,
// json.Number, bool, nil).
type Fields map[string]any

// LocationUnknown is DuckDB's query_location for a node it did not parse (UINT64_MAX).
var LocationUnknown = json.Number("18446744073709551615")

// Object is an object the package does not model.
type Object struct{ Fields Fields }

func (o *Object) fields() Fields                           { return o.Fields }
func (o *Object) rewrite(f func(Node) (Node, error)) error { return rewriteFields(o.Fields, f) }

// Get returns field key of the object (nil when absent).
func (o *Object) Get(key string) any { return o.Fields[key] }

// Decode reads a serialized statement (json_serialize_sql's output).
func Decode(text string) (*Root, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode parse tree: %w", err)
	}
	fs := make(Fields, len(v))
	for k, e := range v {
		l, err := lift(e)
		if err != nil {
			return nil, fmt.Errorf("decode parse tree: %w", err)
		}
		fs[k] = l
	}
	r, err := root(fs)
	if err != nil {
		return nil, fmt.Errorf("decode parse tree: %w", err)
	}
	return r, nil
}

// Encode writes n as JSON, for json_deserialize_sql: objects with their keys
// in order, written straight from the tree.
func Encode(n Node) (string, error) {
	var b bytes.Buffer
	if err := encode(&b, n); err != nil {
		return "", fmt.Errorf("encode parse tree: %w", err)
	}
	return b.String(), nil
}

func encode(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case Node:
		if isNil(x) {
			b.WriteString("null")
			return nil
		}
		fs := x.fields()
		b.WriteByte('{')
		for i, k := range sortedKeys(fs) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := encode(b, fs[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		return encodeList(b, len(x), func(i int) any { return x[i] })
	case []Node:
		return encodeList(b, len(x), func(i int) any { return x[i] })
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("unexpected %T in the tree", v)
	}
	return nil
}

func encodeList(b *bytes.Buffer, n int, at func(int) any) error {
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encode(b, at(i)); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// writeString writes s as a JSON string (without escaping HTML characters):
// as it is when nothing in it needs escaping, the common case.
func writeString(b *bytes.Buffer, s string) {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	var out bytes.Buffer
	e := json.NewEncoder(&out)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // never fails for a string
	b.Write(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
}

// lift turns decoded JSON into the tree, in place: objects into nodes, the
// kinds the package models into their Go types.
func lift(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			l, err := lift(e)
			if err != nil {
				return nil, err
			}
			x[k] = l
		}
		return typed(Fields(x))
	case []any:
		for i, e := range x {
			l, err := lift(e)
			if err != nil {
				return nil, err
			}
			x[i] = l
		}
		return x, nil
	}
	return v, nil
}

// rewriteFields applies f to every node in fs, in key order.
func rewriteFields(fs Fields, f func(Node) (Node, error)) error {
	for _, k := range sortedKeys(fs) {
		v, err := rewriteValue(fs[k], f)
		if err != nil {
			return err
		}
		fs[k] = v
	}
	return nil
}

func rewriteValue(v any, f func(Node) (Node, error)) (any, error) {
	switch x := v.(type) {
	case Node:
		return rewriteNode(x, f)
	case []any:
		for i, e := range x {
			r, err := rewriteValue(e, f)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	}
	return v, nil
}

func rewriteNode(n Node, f func(Node) (Node, error)) (Node, error) {
	if isNil(n) {
		return n, nil
	}
	return f(n)
}

func rewriteList(xs []Node, f func(Node) (Node, error)) error {
	for i, x := range xs {
		r, err := rewriteNode(x, f)
		if err != nil {
			return err
		}
		xs[i] = r
	}
	return nil
}

// isNil reports a nil node, typed or not.
func isNil(n Node) bool {
	switch x := n.(type) {
	case nil:
		return true
	case *Object:
		return x == nil
	}
	return false
}
