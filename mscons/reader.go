package mscons

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/meterstore/meterstore/metering"
)

// Limits applied when Options leaves them zero.
const (
	// DefaultMaxSegmentBytes bounds one segment. The longest segment of an
	// MSCONS message is a few hundred bytes.
	DefaultMaxSegmentBytes = 64 << 10
	// DefaultMaxMessageSegments bounds one message (all parts of a split
	// message together): a year of quarter-hours on one channel is about
	// 105 000 segments.
	DefaultMaxMessageSegments = 1 << 20
)

// Options configure a Reader.
type Options struct {
	// Now returns the time a message is recorded at: every delivery's
	// RecordedAt and its INGESTED provenance event. Required — the reader
	// owns no clock, so an import can record one instant for a whole file
	// and a test can be deterministic. It is called once per message.
	Now func() time.Time

	// MaloOf resolves a Messlokation named in LOC+172 to the Marktlokation
	// its readings are stored on. Nil: a message naming a MeLo is refused,
	// naming the MeLo, rather than stored without its MaLo.
	MaloOf func(metering.MeloID) (metering.MaloID, error)

	// TimeZone reads a DTM in a format without a UTC offset (203
	// CCYYMMDDHHMM, 204 CCYYMMDDHHMMSS) as wall-clock time in that zone,
	// refusing a wall clock the zone skips or repeats. Nil refuses such a
	// DTM, naming this option.
	TimeZone *time.Location

	// MaxSegmentBytes bounds one segment; zero means
	// DefaultMaxSegmentBytes, negative is an error. A longer segment ends
	// the interchange with a *SyntaxError wrapping ErrLimit.
	MaxSegmentBytes int

	// MaxMessageSegments bounds one message; zero means
	// DefaultMaxMessageSegments, negative is an error. A longer message is
	// refused (*MessageError wrapping ErrLimit) and skipped without being
	// held in memory.
	MaxMessageSegments int
}

// Message is one MSCONS message (all parts of a split message joined)
// whose values all passed: its deliveries are ready for the store.
type Message struct {
	Interchange        string    // UNB control reference (DE0020)
	Ref                string    // UNH message reference (DE0062) of the first part
	Parts              int       // 1, or the number of parts a split message was joined from
	Document           string    // BGM document number (DE1004)
	DocumentType       string    // BGM document name code (DE1001), e.g. "7", "Z48"
	DocumentDate       time.Time // DTM+137 in UTC; zero when absent
	Pruefidentifikator string    // RFF+Z13, e.g. "13025"
	Sender             metering.BdewCode
	Receiver           string // NAD+MR as written
	Kind               Kind

	// Deliveries holds one delivery per location, OBIS channel and
	// Bilanzierungsmonat (a delivery lies in one version scope), each
	// passing metering.Delivery.Validate.
	Deliveries []metering.Delivery
}

// Reader reads MSCONS interchanges from a byte stream, one message per
// Next. It holds one message in memory, never the whole stream.
type Reader struct {
	sc  *scanner
	opt Options
	err error // sticky: io.EOF or a *SyntaxError

	started       bool
	inInterchange bool
	interchange   string
	messages      int // UNH segments seen in this interchange

	pending    segment // read ahead, processed by the next call
	hasPending bool

	split     *builder // a split message waiting for its next part
	splitRef  string   // its DE0068
	splitSeq  int      // the last part read
	skipSplit string   // DE0068 of a refused split message whose later parts are skipped
}

// NewReader returns a Reader on src. It reads src through its own buffer
// and never closes it.
func NewReader(src io.Reader, o Options) *Reader {
	r := &Reader{opt: o}
	switch {
	case o.Now == nil:
		r.err = errors.New("mscons: Options.Now is required: the reader takes the recording time from the caller")
	case o.MaxSegmentBytes < 0 || o.MaxMessageSegments < 0:
		r.err = fmt.Errorf("mscons: Options.MaxSegmentBytes %d and MaxMessageSegments %d must not be negative (zero means the default)", o.MaxSegmentBytes, o.MaxMessageSegments)
	}
	if r.opt.MaxSegmentBytes == 0 {
		r.opt.MaxSegmentBytes = DefaultMaxSegmentBytes
	}
	if r.opt.MaxMessageSegments == 0 {
		r.opt.MaxMessageSegments = DefaultMaxMessageSegments
	}
	r.sc = newScanner(src, r.opt.MaxSegmentBytes)
	return r
}

// Next returns the next message. Its errors:
//   - io.EOF after the last interchange;
//   - a *MessageError (errors.Is(err, ErrRefused)) for a refused message —
//     call Next again for the following ones;
//   - a *SyntaxError (errors.Is(err, ErrSyntax)) when the stream cannot be
//     read further: a broken segment, a file cut short (wrapping
//     io.ErrUnexpectedEOF), a segment over the limit, a UNZ whose count or
//     reference does not match. UNZ is checked after the messages it counts
//     were returned, so a caller that must not keep part of a damaged
//     interchange holds its messages until Next returns io.EOF.
//
// Every later call returns the same io.EOF or *SyntaxError.
func (r *Reader) Next() (*Message, error) {
	if r.err != nil {
		return nil, r.err
	}
	m, err := r.next()
	if err != nil && !errors.Is(err, ErrRefused) {
		r.err = err
	}
	return m, err
}

func (r *Reader) read() (segment, error) {
	if r.hasPending {
		r.hasPending = false
		return r.pending, nil
	}
	s, err := r.sc.next()
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.Interchange = r.interchange
		}
	}
	return s, err
}

func (r *Reader) syntax(s segment, ref, rule, hint string, err error) *SyntaxError {
	return &SyntaxError{Interchange: r.interchange, Ref: ref, Tag: s.tag, Line: s.line, Offset: s.off, Rule: rule, Hint: hint, Err: err}
}

func (r *Reader) next() (*Message, error) {
	for {
		s, err := r.read()
		if errors.Is(err, io.EOF) {
			switch {
			case r.inInterchange:
				return nil, &SyntaxError{Interchange: r.interchange, Line: r.sc.line, Offset: r.sc.off,
					Rule: "input ends before UNZ", Hint: "the file is cut short; ask for it again", Err: io.ErrUnexpectedEOF}
			case !r.started:
				return nil, &SyntaxError{Line: r.sc.line, Offset: r.sc.off, Rule: "input holds no interchange (no UNB segment)",
					Hint: "an MSCONS file starts with UNA or UNB"}
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if !r.inInterchange {
			if s.tag != "UNB" {
				return nil, r.syntax(s, "", "expected UNB to open an interchange, found "+s.tag, "an MSCONS file starts with UNA or UNB", nil)
			}
			cs, ok := charsetOf(s.get(0, 0))
			if !ok {
				return nil, r.syntax(s, "", fmt.Sprintf("UNB syntax identifier %q names a character set this reader cannot decode", s.get(0, 0)),
					"this reader decodes UNOA/UNOB (ASCII), UNOC (ISO 8859-1) and UNOW/UNOY (UTF-8)", nil)
			}
			r.sc.charset = cs
			r.interchange = s.get(4, 0)
			if r.interchange == "" {
				return nil, r.syntax(s, "", "UNB has no interchange control reference (DE0020)", "", nil)
			}
			r.started, r.inInterchange, r.messages = true, true, 0
			continue
		}
		switch s.tag {
		case "UNH":
			m, err := r.message(s)
			if m == nil && err == nil {
				continue // a part of a split message, or one skipped
			}
			return m, err
		case "UNZ":
			if r.split != nil {
				return nil, r.abandonSplit(s)
			}
			r.inInterchange = false
			r.sc.allowUNA = true
			r.sc.charset = charsetASCII
			r.skipSplit = ""
			if n, err := strconv.Atoi(s.get(0, 0)); err != nil || n != r.messages {
				return nil, r.syntax(s, "", fmt.Sprintf("UNZ counts %q messages, the interchange has %d", s.get(0, 0), r.messages),
					"messages were lost or added in transit; ask the sender to resend the interchange", nil)
			}
			if ref := s.get(1, 0); ref != r.interchange {
				return nil, r.syntax(s, "", fmt.Sprintf("UNZ reference %q does not match UNB's %q", ref, r.interchange),
					"the end of another interchange was appended; ask the sender to resend", nil)
			}
		default:
			return nil, r.syntax(s, "", "segment "+s.tag+" between messages", "every segment after UNB belongs to a UNH … UNT message or is UNZ", nil)
		}
	}
}

// abandonSplit refuses the open split message because s is not its next
// part; s is processed on the next call.
func (r *Reader) abandonSplit(s segment) error {
	b := r.split
	r.split = nil
	r.pending, r.hasPending = s, true
	r.skipSplit = r.splitRef
	return b.refuse(s, fmt.Sprintf("split message %q ends after part %d: the next part is missing", r.splitRef, r.splitSeq),
		"ask the sender for the whole message", nil)
}

// message reads one UNH … UNT part. It returns (nil, nil) when the part is
// not the last of a split message, or belongs to one already refused.
func (r *Reader) message(unh segment) (*Message, error) {
	ref := unh.get(0, 0)
	access := unh.get(2, 0)
	seqText, flag := unh.get(3, 0), unh.get(3, 1)
	seq := 1
	if seqText != "" {
		n, err := strconv.Atoi(seqText)
		if err != nil || n < 1 {
			r.messages++
			b := r.newBuilder(ref)
			return nil, r.drain(b, b.refuse(unh, fmt.Sprintf("UNH sequence of transfers %q is not a positive number", seqText), "", nil))
		}
		seq = n
	}
	final := seqText == "" || flag == "F"

	var b *builder
	if r.split != nil {
		if access != r.splitRef || seq != r.splitSeq+1 {
			return nil, r.abandonSplit(unh)
		}
		b = r.split
		r.split = nil
		b.parts++
		b.ordinal = 0
		b.repeat = false
	}
	r.messages++
	if b == nil {
		b = r.newBuilder(ref)
		if seq > 1 {
			if access != "" && access == r.skipSplit {
				return nil, r.drain(b, nil)
			}
			return nil, r.drain(b, b.refuse(unh, fmt.Sprintf("part %d of split message %q arrives without part 1", seq, access), "ask the sender for the whole message", nil))
		}
		if !final && access == "" {
			return nil, r.drain(b, b.refuse(unh, "split message (S010 "+seqText+":"+flag+") has no common access reference (DE0068) to join its parts", "", nil))
		}
		if t := unh.get(1, 0); t != "MSCONS" {
			return nil, r.drain(b, b.refuse(unh, fmt.Sprintf("message type %q is not MSCONS", t), "this reader reads MSCONS only", nil))
		}
	}
	b.ordinal, b.segments = 1, b.segments+1
	for {
		s, err := r.read()
		if errors.Is(err, io.EOF) {
			return nil, &SyntaxError{Interchange: r.interchange, Ref: ref, Line: r.sc.line, Offset: r.sc.off,
				Rule: "input ends inside message " + strconv.Quote(ref), Hint: "the file is cut short; ask for it again", Err: io.ErrUnexpectedEOF}
		}
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				se.Ref = ref
			}
			return nil, err
		}
		switch s.tag {
		case "UNH", "UNZ":
			r.pending, r.hasPending = s, true
			if b.err == nil {
				b.refuse(s, "message ends without UNT: "+s.tag+" follows", "the message is incomplete; ask the sender to resend", nil)
			}
			return nil, b.err
		}
		b.ordinal++
		b.segments++
		if b.err == nil && b.segments > r.opt.MaxMessageSegments {
			b.refuse(s, fmt.Sprintf("message is longer than the limit of %d segments", r.opt.MaxMessageSegments),
				"split it, or raise Options.MaxMessageSegments if the file is known good", ErrLimit)
		}
		if s.tag != "UNT" {
			if b.err == nil {
				b.feed(s)
			}
			continue
		}
		if b.err == nil {
			if n, err := strconv.Atoi(s.get(0, 0)); err != nil || n != b.ordinal {
				b.refuse(s, fmt.Sprintf("UNT counts %q segments, the message has %d", s.get(0, 0), b.ordinal),
					"segments were lost or added in transit; ask the sender to resend", nil)
			} else if s.get(1, 0) != ref {
				b.refuse(s, fmt.Sprintf("UNT reference %q does not match UNH's %q", s.get(1, 0), ref), "", nil)
			}
		}
		switch {
		case b.err != nil:
			if !final {
				r.skipSplit = access
			}
			return nil, b.err
		case !final:
			r.split, r.splitRef, r.splitSeq = b, access, seq
			return nil, nil
		}
		return b.finish(s)
	}
}

// drain skips the rest of a refused part up to its UNT (or the segment that
// ends it) and returns err.
func (r *Reader) drain(b *builder, err error) error {
	for {
		s, rerr := r.read()
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				rerr = &SyntaxError{Interchange: r.interchange, Ref: b.m.Ref, Line: r.sc.line, Offset: r.sc.off,
					Rule: "input ends inside message " + strconv.Quote(b.m.Ref), Hint: "the file is cut short; ask for it again", Err: io.ErrUnexpectedEOF}
			}
			return rerr
		}
		switch s.tag {
		case "UNH", "UNZ":
			r.pending, r.hasPending = s, true
			return err
		case "UNT":
			return err
		}
	}
}
