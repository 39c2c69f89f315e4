package access

import (
	"errors"
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/engine"
)

// Refusal is a statement refused by one of the server's limits or rules,
// with the SQLSTATE a PostgreSQL client branches on (pgwire sends it as is,
// Flight SQL maps it to a gRPC code), the message naming the limit, and the
// hint saying what to do.
type Refusal struct {
	Code, Message, Hint string
}

func (r *Refusal) Error() string { return r.Message }

// ResourceRefusal is the refusal of a statement the engine could not run for
// want of a shared resource — the memory budget (53200) or a confined
// database (53300) — naming the setting that bounds it, or nil.
func ResourceRefusal(err error) *Refusal {
	if r := outOfMemory(err); r != nil {
		return r
	}
	return confinedBusy(err)
}

// confinedBusy is the refusal of a scoped statement while every confined
// database the engine may open runs another scope's statement, or nil:
// SQLSTATE 53300 (too_many_connections), at once rather than queued.
func confinedBusy(err error) *Refusal {
	var busy *engine.ConfinedBusyError
	if !errors.As(err, &busy) {
		return nil
	}
	return &Refusal{Code: "53300",
		Message: fmt.Sprintf("too many tenants at once: all %d confined databases (confined_databases) are running statements of other scopes", busy.Cap),
		Hint: "Retry when a statement ends. The operator raises the cap with [serve] confined_databases or msql serve --confined-databases; " +
			"each confined database then gets a smaller share of the memory budget."}
}

// duckOOM marks DuckDB's refusal of an allocation over its memory_limit.
const duckOOM = "Out of Memory Error: "

// outOfMemory is the refusal of a statement that did not fit the engine's
// memory budget, or nil: SQLSTATE 53200 with DuckDB's account of the
// allocation, the setting that bounds it and what to do. Only that statement
// fails; DuckDB has released its memory by the time the error arrives.
func outOfMemory(err error) *Refusal {
	if err == nil {
		return nil
	}
	_, what, found := strings.Cut(err.Error(), duckOOM)
	if !found {
		return nil
	}
	what, _, _ = strings.Cut(what, "\n")
	return &Refusal{Code: "53200",
		Message: fmt.Sprintf("out of memory: the statement needs more than the server's memory budget for queries (%s)", strings.TrimSpace(what)),
		Hint: "Aggregate or filter more narrowly (a time range, fewer MaLos), or raise the budget: [engine] memory_limit or msql serve --memory-limit. " +
			"What DuckDB can spill (sorts, joins, grouping) already went to [engine] temp_directory."}
}
