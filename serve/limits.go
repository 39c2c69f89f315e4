package serve

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// duckOOM marks DuckDB's refusal of an allocation over its memory_limit.
const duckOOM = "Out of Memory Error: "

// outOfMemory is the refusal of a statement that did not fit the engine's
// memory budget, or nil: SQLSTATE 53200 with DuckDB's account of the
// allocation, the setting that bounds it and what to do. Only that statement
// fails; DuckDB has released its memory by the time the error arrives.
func outOfMemory(err error) *pgError {
	if err == nil {
		return nil
	}
	_, what, found := strings.Cut(err.Error(), duckOOM)
	if !found {
		return nil
	}
	what, _, _ = strings.Cut(what, "\n")
	return &pgError{code: "53200",
		msg: fmt.Sprintf("out of memory: the statement needs more than the server's memory budget for queries (%s)", strings.TrimSpace(what)),
		hint: "Aggregate or filter more narrowly (a time range, fewer MaLos), or raise the budget: [engine] memory_limit or msql serve --memory-limit. " +
			"What DuckDB can spill (sorts, joins, grouping) already went to [engine] temp_directory."}
}

// limitStatus is a refusal by one of the server's limits as a gRPC status, or
// nil.
func limitStatus(err error) error {
	var pe *pgError
	if oom := outOfMemory(err); oom != nil {
		pe = oom
	} else if !errors.As(err, &pe) || !strings.HasPrefix(pe.code, "53") && !strings.HasPrefix(pe.code, "54") {
		return nil
	}
	msg := pe.msg
	if pe.hint != "" {
		msg += " — " + pe.hint
	}
	return status.Error(codes.ResourceExhausted, msg)
}
