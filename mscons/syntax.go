package mscons

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// separators are the service characters of an interchange (ISO 9735 UNA).
type separators struct {
	comp, elem, dec, rel, term byte
}

// defaultSeparators apply when an interchange has no UNA: ":+.? '".
var defaultSeparators = separators{comp: ':', elem: '+', dec: '.', rel: '?', term: '\''}

// segment is one EDIFACT segment with its release characters removed. Its
// components are spans of text: ends[k] is where component k ends (negated
// minus one when it also ends an element), first[i] is the index of the
// first component of element i (element 0 is the tag). Spans hold no
// pointers, so building them costs no write barriers; ends and first are
// reused by the scanner's next segment.
type segment struct {
	tag   string
	text  string
	ends  []int
	first []int
	line  int   // 1-based line of the segment's first byte
	off   int64 // byte offset of the segment's first byte
}

func span(e int) int {
	if e < 0 {
		return -e - 1
	}
	return e
}

// get returns component j of data element i (the element after the tag is
// 0), "" when absent.
func (s *segment) get(i, j int) string {
	i++
	if i >= len(s.first) {
		return ""
	}
	k := s.first[i] + j
	last := len(s.ends)
	if i+1 < len(s.first) {
		last = s.first[i+1]
	}
	if k >= last {
		return ""
	}
	start := 0
	if k > 0 {
		start = span(s.ends[k-1])
	}
	return s.text[start:span(s.ends[k])]
}

// scanner splits a byte stream into segments. It holds at most one segment
// (maxSegment bytes) beyond bufio's buffer, whatever the input.
type scanner struct {
	r          *bufio.Reader
	seps       separators
	maxSegment int
	line       int
	off        int64
	buf        []byte
	allowUNA   bool // at the start of an interchange
	charset    charset

	// reused by split
	ubuf  []byte
	ends  []int
	first []int
}

func newScanner(r io.Reader, maxSegment int) *scanner {
	s := &scanner{r: bufio.NewReaderSize(r, 64<<10), seps: defaultSeparators, maxSegment: maxSegment, line: 1, allowUNA: true}
	// A UTF-8 byte order mark, as editors on Windows write, is not part of
	// the interchange.
	if p, _ := s.r.Peek(3); string(p) == "\xef\xbb\xbf" {
		_, _ = s.r.Discard(3)
		s.off = 3
	}
	return s
}

// charset is how the text of an interchange is encoded, from UNB's syntax
// identifier (ISO 9735 DE0001).
type charset uint8

const (
	charsetASCII  charset = iota // UNOA, UNOB, and before UNB: non-ASCII is refused
	charsetLatin1                // UNOC: ISO 8859-1, decoded to UTF-8
	charsetUTF8                  // UNOW, UNOY: must be valid UTF-8
)

// charsetOf maps a syntax identifier; ok is false for the ones this reader
// cannot decode (UNOD … UNOK are other ISO 8859 parts).
func charsetOf(id string) (charset, bool) {
	switch id {
	case "UNOA", "UNOB":
		return charsetASCII, true
	case "UNOC":
		return charsetLatin1, true
	case "UNOW", "UNOY":
		return charsetUTF8, true
	}
	return charsetASCII, false
}

// checkText refuses a segment whose non-ASCII bytes the interchange's
// character set does not explain (Latin-1 was decoded while splitting).
func (s *scanner) checkText(u []byte, line int, off int64) error {
	switch s.charset {
	case charsetLatin1:
		return nil
	case charsetUTF8:
		if utf8.Valid(u) {
			return nil
		}
		return &SyntaxError{Line: line, Offset: off, Tag: tagOf(u), Rule: "segment is not valid UTF-8, as UNB's syntax identifier (UNOW, UNOY) declares"}
	}
	return &SyntaxError{Line: line, Offset: off, Tag: tagOf(u), Rule: "segment has a byte outside ASCII, which UNB's syntax identifier does not allow or this reader cannot decode",
		Hint: "this reader decodes UNOA/UNOB (ASCII), UNOC (ISO 8859-1) and UNOW/UNOY (UTF-8)"}
}

// skipSpace skips line breaks and blanks between segments.
func (s *scanner) skipSpace() error {
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return err
		}
		switch b {
		case '\n':
			s.line++
		case '\r', ' ', '\t':
		default:
			return s.r.UnreadByte()
		}
		s.off++
	}
}

// readUNA reads a service string advice "UNA:+.? '" and takes its
// separators for the interchange that follows.
func (s *scanner) readUNA() error {
	var b [9]byte
	n, err := io.ReadFull(s.r, b[:])
	s.off += int64(n)
	if err != nil {
		return &SyntaxError{Line: s.line, Offset: s.off - int64(n), Tag: "UNA", Rule: "UNA is cut short: it has 6 service characters after the tag", Err: io.ErrUnexpectedEOF}
	}
	seps := separators{comp: b[3], elem: b[4], dec: b[5], rel: b[6], term: b[8]}
	if seps.dec != '.' && seps.dec != ',' {
		return &SyntaxError{Line: s.line, Offset: s.off - 9, Tag: "UNA", Rule: fmt.Sprintf("decimal mark %q is neither '.' nor ','", seps.dec), Hint: "ISO 9735 allows a comma or a full stop"}
	}
	set := []byte{seps.comp, seps.elem, seps.rel, seps.term}
	for i := range set {
		if set[i] == '\n' || set[i] == '\r' || bytes.IndexByte(set[i+1:], set[i]) >= 0 || set[i] == seps.dec {
			return &SyntaxError{Line: s.line, Offset: s.off - 9, Tag: "UNA", Rule: fmt.Sprintf("service characters %q are not distinct", string(b[3:9])), Hint: "component, element, release and terminator must differ from each other and from the decimal mark"}
		}
	}
	s.line += bytes.Count(b[:], []byte{'\n'})
	s.seps = seps
	return nil
}

// next returns the next segment; io.EOF only between segments.
func (s *scanner) next() (segment, error) {
	if err := s.skipSpace(); err != nil {
		return segment{}, err
	}
	if s.allowUNA {
		s.allowUNA = false
		if p, _ := s.r.Peek(3); string(p) == "UNA" {
			if err := s.readUNA(); err != nil {
				return segment{}, err
			}
			if err := s.skipSpace(); err != nil {
				if errors.Is(err, io.EOF) {
					return segment{}, &SyntaxError{Line: s.line, Offset: s.off, Tag: "UNA", Rule: "input ends after UNA", Err: io.ErrUnexpectedEOF}
				}
				return segment{}, err
			}
		}
	}
	line, off := s.line, s.off
	s.buf = s.buf[:0]
	for {
		chunk, err := s.r.ReadSlice(s.seps.term)
		if len(s.buf)+len(chunk) > s.maxSegment {
			return segment{}, &SyntaxError{Line: line, Offset: off, Tag: tagOf(append(s.buf, chunk...)),
				Rule: fmt.Sprintf("segment is longer than the limit of %d bytes", s.maxSegment),
				Hint: "a segment this long is not MSCONS; raise Options.MaxSegmentBytes only if the file is known good", Err: ErrLimit}
		}
		s.buf = append(s.buf, chunk...)
		s.off += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return segment{}, &SyntaxError{Line: line, Offset: off, Tag: tagOf(s.buf),
					Rule: fmt.Sprintf("input ends inside a segment (no terminator %q)", s.seps.term), Hint: "the file is cut short; ask for it again", Err: io.ErrUnexpectedEOF}
			}
			return segment{}, err
		}
		// The terminator is released when an odd number of release
		// characters precede it.
		n := 0
		for i := len(s.buf) - 2; i >= 0 && s.buf[i] == s.seps.rel; i-- {
			n++
		}
		if n%2 == 0 {
			break
		}
	}
	s.line += bytes.Count(s.buf, []byte{'\n'})
	return s.split(s.buf[:len(s.buf)-1], line, off)
}

func tagOf(b []byte) string {
	n := 0
	for n < len(b) && n < 3 && b[n] >= 'A' && b[n] <= 'Z' {
		n++
	}
	return string(b[:n])
}

// split cuts a raw segment (without terminator) into elements and
// components, removing release characters. The segment's text is one
// string and its components are substrings of it; the element and
// component slices are reused by the next call, so a segment's data is
// valid until then (the strings stay valid).
func (s *scanner) split(raw []byte, line int, off int64) (segment, error) {
	u := s.ubuf[:0]
	ends := s.ends[:0] // end offset in u of each component; negative ends an element too
	nonASCII := false
	latin1 := s.charset == charsetLatin1
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c >= 0x80 {
			nonASCII = true
			if latin1 {
				u = utf8.AppendRune(u, rune(c))
				continue
			}
		}
		switch c {
		case s.seps.rel:
			i++
			if i == len(raw) {
				return segment{}, &SyntaxError{Line: line, Offset: off, Tag: tagOf(raw), Rule: "release character at the end of a segment releases nothing"}
			}
			if raw[i] >= 0x80 && latin1 {
				u = utf8.AppendRune(u, rune(raw[i]))
				continue
			}
			nonASCII = nonASCII || raw[i] >= 0x80
			u = append(u, raw[i])
		case s.seps.comp:
			ends = append(ends, len(u))
		case s.seps.elem:
			ends = append(ends, -len(u)-1)
		default:
			u = append(u, c)
		}
	}
	ends = append(ends, -len(u)-1)
	s.ubuf, s.ends = u, ends
	if nonASCII {
		if err := s.checkText(u, line, off); err != nil {
			return segment{}, err
		}
	}
	first := append(s.first[:0], 0)
	for k, e := range ends[:len(ends)-1] {
		if e < 0 {
			first = append(first, k+1)
		}
	}
	s.first = first
	tagEnd := span(ends[0])
	if len(u) < 3 || tagEnd != 3 || ends[0] >= 0 || tagOf(u[:3]) != string(u[:3]) {
		shown := raw
		if len(shown) > 40 {
			shown = shown[:40]
		}
		return segment{}, &SyntaxError{Line: line, Offset: off, Rule: fmt.Sprintf("segment %q does not start with a three-letter tag", shown),
			Hint: "the separators may not match the file; check its UNA"}
	}
	text := string(u)
	return segment{tag: text[:3], text: text, ends: ends, first: first, line: line, off: off}, nil
}
