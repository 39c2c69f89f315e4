package pgwire

import "strings"

// A client is told what went wrong — DuckDB's message ("Binder Error: …")
// and ours — not which of our steps it went wrong in. stagePrefixes are the
// words our layers put in front of an error on its way up; driverPrefix is
// what the DuckDB driver puts in front of a function's error, which DuckDB
// then quotes after its own "Invalid Input Error: ".
var (
	stagePrefixes = []string{"run: ", "describe: ", "explain: "}
	driverPrefix  = "database/sql/driver: API error: "
)

// wireMessage is an error's text as it goes on the wire, in ErrorResponse:
// without stage prefixes. The SQLSTATE is chosen before, from the error itself.
func wireMessage(msg string) string {
	msg = strings.ReplaceAll(msg, driverPrefix, "")
	for trimmed := true; trimmed; {
		trimmed = false
		for _, p := range stagePrefixes {
			if rest, ok := strings.CutPrefix(msg, p); ok {
				msg, trimmed = rest, true
			}
		}
	}
	return msg
}
