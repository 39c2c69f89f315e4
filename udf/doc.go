// Package udf installs MeterStore's SQL functions in DuckDB: thin scalar-UDF
// wrappers over package metering, so a query asks the domain rules instead
// of re-deriving them (seed 003: "Calendar functions", "OBIS predicates in
// SQL", "Quality is a code list…", "The other stored identifier").
//
//	db, err := udf.Open("")          // or sql.OpenDB(udf.Connector(dsn))
//	// every pooled connection has the functions:
//	db.QueryContext(ctx, `SELECT sparte, meter_balancing_day("from", sparte) AS day, SUM(value)
//	                      FROM readings GROUP BY 1, 2`)
//
// # Functions
//
//	meter_local_day(ts)                          DATE  Berlin calendar day
//	meter_gas_day(ts)                            DATE  Gastag, 06:00–06:00 local
//	meter_balancing_day(ts, sparte)              DATE  the day sparte balances on (per row)
//	meter_local_month(ts)                        DATE  Berlin calendar month, as its first day
//	meter_balancing_month(ts, sparte)            DATE  Bilanzierungsmonat, as its first day
//	meter_expected_intervals(day, res[, sparte]) INTEGER  96 / 92 / 100 at PT15M
//	obis_direction(code)                         VARCHAR  'IMPORT', 'EXPORT' or NULL
//	obis_is_import, obis_is_export, obis_is_reactive, obis_is_lastgang,
//	obis_is_zaehlerstand, obis_is_vorschub, obis_is_maximum,
//	obis_is_fehlerregister, obis_is_total_register (code)   BOOLEAN
//	obis_tariff_register(code)                   INTEGER  NULL for the total and the fault counter
//	obis_normalise(code)                         VARCHAR  the canonical spelling
//	quality_is_billable, quality_is_provisional (q)         BOOLEAN
//	quality_market_code(q)                       VARCHAR  MSCONS QTY qualifier, or NULL
//	eic_regelzone, eic_object_type, eic_normalise (code)    VARCHAR or NULL
//
// ts is TIMESTAMPTZ; an overload accepts TIMESTAMP, read as UTC. With both
// overloads an untyped string literal is ambiguous to DuckDB's binder: write
// TIMESTAMPTZ '2026-03-29 01:00:00+00'. day is a DATE; without sparte,
// meter_expected_intervals counts the calendar day.
//
// # NULLs and errors
//
// Every function keeps DuckDB's default NULL handling: a NULL argument gives
// NULL without calling Go. All are deterministic (not volatile), so a call
// over constants is folded at plan time. Errors surface as DuckDB
// "Invalid Input Error"s whose text names the function and the value:
//
//   - sparte, resolution and quality are parsed strictly, as the stored
//     columns are canonical. A non-canonical spelling ('gas', 'PT900S',
//     'measured', '220') is an error naming the canonical one; a value outside
//     the list is an error naming the list. Lenient parsing was rejected for
//     SQL: it would hide a column that something wrote wrongly, and a literal
//     in an ad-hoc query is fixed by reading the error.
//   - An OBIS string that does not parse is an error, for the predicates and
//     for obis_direction/obis_normalise alike: they run over a canonical
//     column, and a predicate answering false for garbage would drop rows
//     from a sum silently.
//   - A string that is not an EIC gives NULL, never an error: the EIC
//     functions run over deployment columns that may hold free text.
//   - P1M and P1Y have no per-day count: meter_expected_intervals errors.
//
// # Registration
//
// DuckDB registers a scalar function in the database's system catalog, so a
// function registered on one connection is visible on every connection of
// that database, and registering again replaces it. Register does it on one
// *sql.Conn; Connector and Open install a connection init hook that
// registers on every new connection, which stays correct should functions
// ever become connection-local.
//
// # Performance
//
// No per-row allocation in this package where the driver allows it:
//
//   - Calendar functions memoise metering's answer per UTC hour in a lock-free
//     direct-mapped table holding the pre-boxed DATE result (see hourMemo for
//     why that is a cache, not a re-derivation). The driver still boxes the
//     input time.Time and copies a sparte string per row.
//   - OBIS parses and EIC parses are cached per distinct string (copy-on-write
//     map, bounded), quality needs no cache (the strict parse does not
//     allocate).
//   - VARCHAR → VARCHAR functions (obis_direction, obis_normalise,
//     quality_market_code, eic_*) run on the chunk executor and write their
//     results through duckstream.StringResults: a result DuckDB cannot
//     allocate at its memory_limit fails the statement, where duckdb-go's
//     setter let the C++ exception abort the process. BOOLEAN, INTEGER and
//     DATE results allocate nothing in DuckDB and use the row executor.
//
// BenchmarkGroupByBalancingDay compares meter_balancing_day with the stored
// balancing-day column and with DuckDB's own AT TIME ZONE conversion.
package udf
