package plan

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// relationSlots stand in for the relations the engine renders (a reference's
// tier split: file lists, resolution, the hot scan) while the user's
// statement is turned back into SQL: each reference becomes a table named by
// a token unique to the plan, and fill puts the relation's SQL, in
// parentheses, where the name was rendered. Hanging the relations into the
// tree instead would have DuckDB's parser serialize each of them and render
// them back — most of a statement's planning time, for text the engine wrote.
type relationSlots struct {
	prefix string   // unguessable per plan, so no literal of the user's can hold a slot's name
	sql    []string // slot i's relation
	// inlined are the slots put into another slot's relation (inline), not
	// into the statement.
	inlined map[int]bool
}

func newRelationSlots() (*relationSlots, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("relation slots: %w", err)
	}
	return &relationSlots{prefix: "_meterstore_relation_" + hex.EncodeToString(b[:]) + "_"}, nil
}

// name is slot i's table name; it ends in "_", so no slot's name is a prefix
// of another's.
func (s *relationSlots) name(i int) string { return fmt.Sprintf("%s%d_", s.prefix, i) }

// slot is the table that stands in for ref until fill puts sql in its
// place. It carries the clauses of ref the planner keeps (referenceClauses:
// the alias, column aliases, TABLESAMPLE), so they apply to sql — the
// resolved relation; find references refused any other.
func (s *relationSlots) slot(ref *sqltree.BaseTable, sql string) *sqltree.BaseTable {
	t := &sqltree.BaseTable{TableName: s.name(len(s.sql)), Alias: ref.Name(), Rest: keptClauses(ref)}
	s.sql = append(s.sql, sql)
	return t
}

// named is a slot for sql named alias, with no clause of its own.
func (s *relationSlots) named(alias, sql string) *sqltree.BaseTable {
	t := &sqltree.BaseTable{TableName: s.name(len(s.sql)), Alias: alias, Rest: sqltree.Fields{}}
	s.sql = append(s.sql, sql)
	return t
}

// nameIn is slot i's name as q spells it: quoted where DuckDB quoted it.
func (s *relationSlots) nameIn(q string, i int) string {
	name := s.name(i)
	if quoted := `"` + name + `"`; strings.Contains(q, quoted) {
		return quoted
	}
	return name
}

// inline puts into q, a relation rendered for another slot, the relations
// of the slots it names, as fill does for the statement; fill then expects
// them no more.
func (s *relationSlots) inline(q string) string {
	if s.inlined == nil {
		s.inlined = map[int]bool{}
	}
	var pairs []string
	for i, sql := range s.sql {
		if name := s.nameIn(q, i); strings.Contains(q, name) {
			s.inlined[i] = true
			pairs = append(pairs, name, "("+sql+")")
		}
	}
	return strings.NewReplacer(pairs...).Replace(q)
}

// fill replaces each slot's name in the rendered statement q with its
// relation, in one pass over q. A slot rendered other than exactly once is an
// error: the statement is not what the engine built.
func (s *relationSlots) fill(q string) (string, error) {
	pairs := make([]string, 0, 2*len(s.sql))
	for i, sql := range s.sql {
		if s.inlined[i] {
			continue
		}
		name := s.nameIn(q, i)
		if n := strings.Count(q, name); n != 1 {
			return "", fmt.Errorf("the rendered statement names relation %s %d times, not once: %s", name, n, q)
		}
		pairs = append(pairs, name, "("+sql+")")
	}
	return strings.NewReplacer(pairs...).Replace(q), nil
}
