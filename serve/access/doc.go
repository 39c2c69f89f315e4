// Package access is what the read-only servers (pgwire, flightsql,
// icebergrest) share about who may run what: the configured users and the
// session handle each one's statements run on (always the engine's walled
// DuckDB, confined to the user's scope when it has one), failed logins slowed
// per user and per address, each user's running statements counted against
// max_statements across surfaces, a statement's text, parameters and result
// rows bounded before anything expensive reads it, and the one log line and
// metrics record each statement ends with.
//
// Its refusals are Refusal values carrying the SQLSTATE a PostgreSQL client
// branches on; pgwire sends them as they are, Flight SQL maps 53xxx and
// 54xxx to ResourceExhausted.
package access
