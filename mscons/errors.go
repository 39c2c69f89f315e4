package mscons

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels a caller branches on. MessageError matches ErrRefused and
// SyntaxError matches ErrSyntax; the narrower ones are the cause a
// MessageError or SyntaxError wraps.
var (
	// ErrRefused: a message was refused; the reader goes on with the next.
	ErrRefused = errors.New("mscons: message refused")
	// ErrSyntax: the interchange cannot be read further.
	ErrSyntax = errors.New("mscons: interchange unreadable")
	// ErrStorno: the message cancels an earlier document (BGM 1225 = 1).
	ErrStorno = errors.New("mscons: storno")
	// ErrNotReading: the Prüfidentifikator or product code is not a reading
	// this reader maps (e.g. 13022 Ausfallarbeit, PIA+5+AUA:Z08).
	ErrNotReading = errors.New("mscons: not a meter reading")
	// ErrLimit: a segment or message is larger than Options allow.
	ErrLimit = errors.New("mscons: size limit exceeded")
)

// MessageError refuses one message: nothing of it is delivered, and the
// reader continues with the next message. It names where the reader stopped
// believing the message, the rule it broke and how to fix it; Err is the
// cause when there is one (e.g. a *metering.IdentifierError).
type MessageError struct {
	Interchange        string // UNB control reference
	Ref                string // UNH message reference (of the first part of a split message)
	Document           string // BGM document number, "" when not yet read
	Pruefidentifikator string // RFF+Z13, "" when not yet read

	Tag     string // the segment refused, e.g. "LOC"
	Ordinal int    // its position in the message (in its part), UNH = 1, as UNT counts
	Line    int    // 1-based line in the input
	Offset  int64  // byte offset in the input

	Rule string
	Hint string
	Err  error
}

// Error formats "mscons: message <ref> (document <doc>), segment <n> <tag>
// at line <l>: <rule>: <cause>; <hint>".
func (e *MessageError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mscons: message %q", e.Ref)
	if e.Document != "" {
		fmt.Fprintf(&b, " (document %s)", e.Document)
	}
	if e.Tag != "" {
		fmt.Fprintf(&b, ", segment %d %s at line %d", e.Ordinal, e.Tag, e.Line)
	}
	writeCause(&b, e.Rule, e.Err, e.Hint)
	return b.String()
}

// Unwrap returns the cause.
func (e *MessageError) Unwrap() error { return e.Err }

// Is makes every MessageError match ErrRefused.
func (e *MessageError) Is(target error) bool { return target == ErrRefused }

// SyntaxError ends an interchange: the reader cannot find the next message
// boundary with confidence (a broken segment, a file cut short, a count that
// does not match). Next returns it again on every later call.
type SyntaxError struct {
	Interchange string // UNB control reference, "" before UNB
	Ref         string // the open message, "" between messages
	Tag         string
	Line        int
	Offset      int64
	Rule        string
	Hint        string
	Err         error
}

// Error formats "mscons: line <l>, segment <tag>: <rule>: <cause>; <hint>".
func (e *SyntaxError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mscons: line %d (byte %d)", e.Line, e.Offset)
	if e.Tag != "" {
		fmt.Fprintf(&b, ", segment %s", e.Tag)
	}
	if e.Ref != "" {
		fmt.Fprintf(&b, " in message %q", e.Ref)
	}
	writeCause(&b, e.Rule, e.Err, e.Hint)
	return b.String()
}

// Unwrap returns the cause.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Is makes every SyntaxError match ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// writeCause appends ": <rule>: <cause>; <hint>", leaving out what is
// empty.
func writeCause(b *strings.Builder, rule string, err error, hint string) {
	b.WriteString(": ")
	b.WriteString(rule)
	if err != nil {
		b.WriteString(": ")
		b.WriteString(err.Error())
	}
	if hint != "" {
		b.WriteString("; ")
		b.WriteString(hint)
	}
}
