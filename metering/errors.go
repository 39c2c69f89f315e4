package metering

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is the sentinel every validation failure in this package
// satisfies, so a caller can branch on "the input was wrong" without knowing
// which parser refused it.
var ErrInvalid = errors.New("metering: invalid value")

// Narrower sentinels for the checks a caller may want to tell apart. Each
// wraps ErrInvalid.
var (
	// ErrUnitNotAllowed: a unit the Sparte cannot be expressed in (water in kWh).
	ErrUnitNotAllowed = fmt.Errorf("%w: unit not allowed for sparte", ErrInvalid)
	// ErrScopeMismatch: an interval outside the version scope's month.
	ErrScopeMismatch = fmt.Errorf("%w: interval outside version scope", ErrInvalid)
	// ErrOverlap: two intervals of one delivery overlap.
	ErrOverlap = fmt.Errorf("%w: overlapping intervals", ErrInvalid)
	// ErrNotDaily: a resolution coarser than a day has no per-day count.
	ErrNotDaily = fmt.Errorf("%w: resolution has no per-day interval count", ErrInvalid)
)

// IdentifierError reports an identifier that failed a rule. It carries the
// value as given, the rule it broke and how to fix it, because the person
// reading it is usually looking at a file someone else produced.
type IdentifierError struct {
	Kind  string // e.g. "malo-id"
	Value string // the input as given
	Rule  string // the rule that failed
	Hint  string // how to fix it
}

// Error formats `<kind> "<value>": <rule>; <hint>`.
func (e *IdentifierError) Error() string {
	return fmt.Sprintf("%s %q: %s; %s", e.Kind, e.Value, e.Rule, e.Hint)
}

// Is makes every IdentifierError match ErrInvalid.
func (e *IdentifierError) Is(target error) bool { return target == ErrInvalid }

// CodeError reports a value outside a code list, or a non-canonical spelling
// of a valid code. Canonical is set in the second case: a stored form must
// hold exactly one spelling per code, and the error names it.
type CodeError struct {
	Kind      string   // e.g. "sparte"
	Value     string   // the input as given
	Allowed   []string // the canonical codes
	Canonical string   // non-empty when Value is a non-canonical spelling of a valid code
}

// Error names the canonical spelling when there is one, else the allowed codes.
func (e *CodeError) Error() string {
	if e.Canonical != "" {
		return fmt.Sprintf("%s %q is not canonical: store %q", e.Kind, e.Value, e.Canonical)
	}
	return fmt.Sprintf("%s %q is not a known code; use one of %s", e.Kind, e.Value, strings.Join(e.Allowed, ", "))
}

// Is makes every CodeError match ErrInvalid.
func (e *CodeError) Is(target error) bool { return target == ErrInvalid }

func idErr(kind, value, rule, hint string) error {
	return &IdentifierError{Kind: kind, Value: value, Rule: rule, Hint: hint}
}
