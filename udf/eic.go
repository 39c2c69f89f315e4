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

// eicFunc answers NULL for a non-EIC and for an empty answer.
func eicFunc(field func(eicEntry) string) stringFunc {
	return stringFunc{fn: func(s string) (string, bool, error) {
		r := field(parseEIC(s))
		return r, r != "", nil
	}}
}

func eicDefinitions() []definition {
	return []definition{
		{name: "eic_regelzone", overloads: []duckdb.ScalarFunc{eicFunc(func(e eicEntry) string { return e.regelzone })}},
		{name: "eic_object_type", overloads: []duckdb.ScalarFunc{eicFunc(func(e eicEntry) string { return e.objectType })}},
		{name: "eic_normalise", overloads: []duckdb.ScalarFunc{eicFunc(func(e eicEntry) string { return e.normalised })}},
	}
}
