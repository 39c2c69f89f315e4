package udf

import (
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/metering"
)

// eicEntry holds the three answers for one string, precomputed at parse
// time. ok is false when the string is not an EIC.
type eicEntry struct {
	ok         bool
	normalised string
	objectType string // "" when the letter is not on metering's list
	regelzone  string // "" when the code names no German control area
}

// eics caches parses, including "not an EIC" (never an error here: the
// argument is a deployment column that may hold free text). The bound keeps
// a free-text column from growing it without limit.
var eics = newStringCache[eicEntry](4096)

func parseEIC(s string) eicEntry {
	e, _ := eics.get(s, func(s string) (eicEntry, error) {
		c, err := metering.ParseEIC(s)
		if err != nil {
			return eicEntry{}, nil
		}
		e := eicEntry{ok: true, normalised: c.String()}
		if t, ok := c.ObjectType(); ok {
			e.objectType = t.String()
		}
		if z, ok := c.Regelzone(); ok {
			e.regelzone = string(z)
		}
		return e, nil
	})
	return e
}

// eicDefinition is the function name answering field of an EIC's parse:
// NULL for a non-EIC and for an empty answer.
func eicDefinition(name string, field func(eicEntry) string) definition {
	return definition{name: name, overloads: []duckdb.ScalarFunc{stringFunc{name: name, fn: func(s string) (string, bool, error) {
		r := field(parseEIC(s))
		return r, r != "", nil
	}}}}
}

func eicDefinitions() []definition {
	return []definition{
		eicDefinition("eic_regelzone", func(e eicEntry) string { return e.regelzone }),
		eicDefinition("eic_object_type", func(e eicEntry) string { return e.objectType }),
		eicDefinition("eic_normalise", func(e eicEntry) string { return e.normalised }),
	}
}
