package sqltext

import "strings"

// String is s as an SQL string literal: in single quotes, each ' doubled.
// DuckDB reads it back as s byte for byte, and so does PostgreSQL with
// standard_conforming_strings on (its default): a backslash is itself, not
// an escape — that is E'…', which nothing here writes. It does not vet s: a
// caller whose value may hold a NUL byte or invalid UTF-8, which neither
// database keeps in text, refuses it first.
func String(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Ident is s as a quoted identifier, in double quotes with each " doubled,
// which DuckDB and PostgreSQL read back as s: its case kept, any character
// allowed. Spark SQL reads "…" as a string literal; its identifiers are
// quoted in backticks (meterstore.ResolutionSQLFor).
func Ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// IdentStart reports whether c may begin an unquoted identifier or keyword
// in DuckDB and PostgreSQL: an ASCII letter, _, or a byte of a multi-byte
// UTF-8 character (≥ 0x80; both scanners take any such byte).
func IdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// IdentByte reports whether c may continue an unquoted identifier: what
// may begin one, or a digit. Both scanners also continue one with $ (a$1 is
// one identifier), which IdentByte leaves out: the name of a parameter
// ($1, $name) and a dollar quote's tag ($tag$) end at a $, and a caller
// that must not split a$1 adds it.
func IdentByte(c byte) bool { return IdentStart(c) || c >= '0' && c <= '9' }
