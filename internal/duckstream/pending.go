package duckstream

import (
	"context"
	"strings"
	"time"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
)

// executePending runs pending to its result in res, as bindings.ExecutePending
// does, except while no task is available to the calling thread. DuckDB's
// own loop asks for the next task again at once then: while its worker
// threads run a pipeline that waits — a hot scan waiting for PostgreSQL's
// next page — the caller's thread spun on the executor's lock and its
// progress estimate, a core of the machine PostgreSQL shares. Here it sleeps,
// from idleMin doubling to idleMax, between asks. The error is the
// statement's as DuckDB raised it (statementError).
func executePending(ctx context.Context, pending bindings.PendingResult, res *bindings.Result) error {
	idle := time.Duration(0)
	for {
		switch bindings.PendingExecuteTask(pending) {
		case bindings.PendingStateResultReady:
			if bindings.ExecutePending(pending, res) == bindings.StateError {
				err := statementError(ctx, res)
				bindings.DestroyResult(res)
				return err
			}
			return nil
		case bindings.PendingStateError:
			// The pending result holds the error now: executing it would
			// wrap it in "Attempting to execute an unsuccessful … pending
			// query result" and lose its type.
			msg := bindings.PendingError(pending)
			return failure(ctx, &duckdb.Error{Type: errorTypeOf(msg), Msg: msg})
		case bindings.PendingStateNoTasksAvailable:
			idle = min(max(2*idle, idleMin), idleMax)
			time.Sleep(idle)
		default:
			idle = 0
		}
	}
}

// idleMin and idleMax bound executePending's sleep while no task is
// available: the statement's result is noticed at most idleMax late, and a
// waiting statement costs its thread a few microseconds per idleMax.
const (
	idleMin = 10 * time.Microsecond
	idleMax = 200 * time.Microsecond
)

// errorTypeOf is the type of a DuckDB error from its message's prefix
// ("Binder Error: …"), as duckdb-go types a pending result's error (its
// errorPrefixMap, unexported): the C API hands that error as text only.
func errorTypeOf(msg string) duckdb.ErrorType {
	if i := strings.Index(msg, ": "); i >= 0 {
		if t, ok := errorPrefixes[msg[:i]]; ok {
			return t
		}
	}
	return duckdb.ErrorTypeInvalid
}

var errorPrefixes = map[string]duckdb.ErrorType{
	"Invalid Error":                duckdb.ErrorTypeInvalid,
	"Out of Range Error":           duckdb.ErrorTypeOutOfRange,
	"Conversion Error":             duckdb.ErrorTypeConversion,
	"Error":                        duckdb.ErrorTypeUnknownType,
	"Decimal Error":                duckdb.ErrorTypeDecimal,
	"Mismatch Type Error":          duckdb.ErrorTypeMismatchType,
	"Divide by Zero Error":         duckdb.ErrorTypeDivideByZero,
	"Object Size Error":            duckdb.ErrorTypeObjectSize,
	"Invalid type Error":           duckdb.ErrorTypeInvalidType,
	"Serialization Error":          duckdb.ErrorTypeSerialization,
	"TransactionContext Error":     duckdb.ErrorTypeTransaction,
	"Not implemented Error":        duckdb.ErrorTypeNotImplemented,
	"Expression Error":             duckdb.ErrorTypeExpression,
	"Catalog Error":                duckdb.ErrorTypeCatalog,
	"Parser Error":                 duckdb.ErrorTypeParser,
	"Planner Error":                duckdb.ErrorTypePlanner,
	"Scheduler Error":              duckdb.ErrorTypeScheduler,
	"Executor Error":               duckdb.ErrorTypeExecutor,
	"Constraint Error":             duckdb.ErrorTypeConstraint,
	"Index Error":                  duckdb.ErrorTypeIndex,
	"Stat Error":                   duckdb.ErrorTypeStat,
	"Connection Error":             duckdb.ErrorTypeConnection,
	"Syntax Error":                 duckdb.ErrorTypeSyntax,
	"Settings Error":               duckdb.ErrorTypeSettings,
	"Binder Error":                 duckdb.ErrorTypeBinder,
	"Network Error":                duckdb.ErrorTypeNetwork,
	"Optimizer Error":              duckdb.ErrorTypeOptimizer,
	"NullPointer Error":            duckdb.ErrorTypeNullPointer,
	"IO Error":                     duckdb.ErrorTypeIO,
	"INTERRUPT Error":              duckdb.ErrorTypeInterrupt,
	"FATAL Error":                  duckdb.ErrorTypeFatal,
	"INTERNAL Error":               duckdb.ErrorTypeInternal,
	"Invalid Input Error":          duckdb.ErrorTypeInvalidInput,
	"Out of Memory Error":          duckdb.ErrorTypeOutOfMemory,
	"Permission Error":             duckdb.ErrorTypePermission,
	"Parameter Not Resolved Error": duckdb.ErrorTypeParameterNotResolved,
	"Parameter Not Allowed Error":  duckdb.ErrorTypeParameterNotAllowed,
	"Dependency Error":             duckdb.ErrorTypeDependency,
	"HTTP Error":                   duckdb.ErrorTypeHTTP,
	"Missing Extension Error":      duckdb.ErrorTypeMissingExtension,
	"Extension Autoloading Error":  duckdb.ErrorTypeAutoLoad,
	"Sequence Error":               duckdb.ErrorTypeSequence,
	"Invalid Configuration Error":  duckdb.ErrorTypeInvalidConfiguration,
}
