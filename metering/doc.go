// Package metering is MeterStore's domain: the identifiers, OBIS codes, code
// lists, calendar, versions and row types of German metering data, with zero
// I/O.
//
// Every other package parses and validates with this one, so a rule lives in
// exactly one place. The style is "parse, don't carry": each type has
// unexported fields, is constructed only by a parser that validates it, prints
// only its canonical spelling (String) and reports its zero value (IsZero). A
// value of a metering type is therefore always valid or visibly zero — a
// transposed MaLo digit is an error at the boundary, never a filtered row
// (design invariant 6).
//
// Code lists (Sparte, Unit, Quality, Resolution) each have two parsers: a
// strict one for stored forms that accepts the canonical spelling only and
// names it in the error (two spellings would be two GROUP BY keys), and a
// lenient one for ingest that trims, folds case and accepts aliases such as
// "WÄRME".
//
// The calendar is Europe/Berlin, loaded once from the embedded tz data
// (time/tzdata) so results never depend on the host. Electricity, heat and
// water balance on the local calendar day; gas balances on the Gastag,
// 06:00–06:00 local, so the 23- and 25-hour gas days are the ones named after
// the Saturday before a DST Sunday.
//
// Versions order corrections (invariant 3 and 4): a correction is a row at a
// higher Version within the same VersionScope, which is the network operator
// and the Bilanzierungsmonat of the interval — never of the delivery.
//
// The rules and their sources are in ../shared/domain-rules.md; where a rule
// is only secondary or unverified, the code says so next to it.
//
//	malo, err := metering.ParseMaloID("41373559241")
//	if err != nil {
//		return err // *metering.IdentifierError, errors.Is(err, metering.ErrInvalid)
//	}
//	day := metering.BalancingDay(from, metering.SparteGas)
package metering
