package mscons

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/meterstore/meterstore/metering"
)

// WriteOptions configure Write.
type WriteOptions struct {
	// Interchange is the UNB control reference; "" writes "MSTORE".
	Interchange string
	// Receiver is NAD+MR and the UNB recipient; zero writes the sender.
	Receiver metering.BdewCode
	// DecimalComma writes "UNA:+,? '" and values with a comma, as many
	// real files do; false writes a full stop.
	DecimalComma bool
	// LineBreaks writes a line break after each segment.
	LineBreaks bool
	// DocumentDate is DTM+137 of messages whose version is an MSCONS label
	// (14 digits); zero writes the label's own instant. A derived
	// (13-digit) version is always written as its document date, which is
	// where the reader derives it from.
	DocumentDate time.Time
}

// Write writes deliveries as one MSCONS interchange, one message per
// delivery, so that a Reader reads them back: same location, OBIS, sparte,
// unit, scope, version and values. It is the inverse of the reader for
// generated data — tests, property tests and benchmarks — not a message
// generator for the market: it writes no CTA/COM contacts and no AHB-specific
// optional segments.
//
// Each delivery needs a version scope (its operator is NAD+MS) and
// qualities with an MSCONS code (metering.Quality.MarketCode): CALCULATED,
// CORRECTED and UNKNOWN are refused. A delivery naming a MeLo is written
// with the MeLo in LOC+172 (Prüfidentifikator 13018 for an electricity
// Lastgang), so reading it back needs Options.MaloOf. Instants must be whole
// minutes (DTM format 303). A version of 14 digits is written as DTM+293 and
// must be a CCYYMMDDHHMMSS date; a 13-digit version is written as the
// document date it derives from (whole seconds).
func Write(w io.Writer, ds []metering.Delivery, o WriteOptions) error {
	mw := NewWriter(w, o)
	for _, d := range ds {
		if err := mw.Write(d); err != nil {
			return err
		}
	}
	return mw.Close()
}

// Writer writes one interchange a message at a time, so a generator can
// stream more deliveries than fit in memory (Write holds them all). The
// rules are Write's.
type Writer struct {
	ew       *edifactWriter
	o        WriteOptions
	ref      string
	recv     metering.BdewCode
	messages int
	err      error // sticky
}

// NewWriter returns a Writer on w; nothing is written before the first
// Write. Close writes UNZ; it does not close w.
func NewWriter(w io.Writer, o WriteOptions) *Writer {
	ref := o.Interchange
	if ref == "" {
		ref = "MSTORE"
	}
	ew := &edifactWriter{w: bufio.NewWriter(w), seps: defaultSeparators, lineBreaks: o.LineBreaks}
	if o.DecimalComma {
		ew.seps.dec = ','
	}
	return &Writer{ew: ew, o: o, ref: ref}
}

// Write writes d as the next message; the first one also opens the
// interchange (UNA, UNB with d's operator as sender). After an error the
// Writer is unusable: the output holds a partial message.
func (w *Writer) Write(d metering.Delivery) error {
	if w.err != nil {
		return w.err
	}
	ew := w.ew
	if w.messages == 0 {
		sender := d.Scope.Operator()
		w.recv = w.o.Receiver
		if w.recv.IsZero() {
			w.recv = sender
		}
		ew.raw(fmt.Sprintf("UNA%c%c%c%c %c", ew.seps.comp, ew.seps.elem, ew.seps.dec, ew.seps.rel, ew.seps.term))
		if w.o.LineBreaks {
			ew.raw("\n")
		}
		date := w.o.DocumentDate
		if date.IsZero() {
			date = d.RecordedAt
		}
		ew.seg("UNB", []string{"UNOC", "3"}, []string{sender.String(), "500"}, []string{w.recv.String(), "500"},
			[]string{date.UTC().Format("060102"), date.UTC().Format("1504")}, []string{w.ref}, nil, []string{"TL"})
	}
	w.messages++
	if err := ew.message(w.messages, d, w.recv, w.o); err != nil {
		w.err = fmt.Errorf("mscons: write delivery %d (%s %s): %w", w.messages-1, d.MaloID, d.Obis, err)
		return w.err
	}
	return nil
}

// Close writes UNZ and flushes. An interchange holds at least one message,
// so Close without a Write is an error.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.messages == 0 {
		w.err = errors.New("mscons: write: no deliveries; an interchange holds at least one message")
		return w.err
	}
	w.ew.seg("UNZ", []string{strconv.Itoa(w.messages)}, []string{w.ref})
	w.err = errors.New("mscons: writer is closed")
	if w.ew.err != nil {
		return w.ew.err
	}
	return w.ew.w.Flush()
}

type edifactWriter struct {
	w          *bufio.Writer
	seps       separators
	lineBreaks bool
	count      int // segments of the current message
	err        error
}

func (e *edifactWriter) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// seg writes a segment; each element is a list of components, escaped.
func (e *edifactWriter) seg(tag string, elems ...[]string) {
	var b strings.Builder
	b.WriteString(tag)
	for _, el := range elems {
		b.WriteByte(e.seps.elem)
		for j, c := range el {
			if j > 0 {
				b.WriteByte(e.seps.comp)
			}
			for _, r := range c {
				switch {
				case r >= 0x80 && r <= 0xff:
					b.WriteByte(byte(r)) // UNOC is ISO 8859-1
					continue
				case r > 0xff:
					if e.err == nil {
						e.err = fmt.Errorf("%q has a character outside ISO 8859-1, which UNB's UNOC declares", c)
					}
					continue
				}
				switch byte(r) {
				case e.seps.comp, e.seps.elem, e.seps.rel, e.seps.term:
					b.WriteByte(e.seps.rel)
				}
				b.WriteByte(byte(r))
			}
		}
	}
	b.WriteByte(e.seps.term)
	if e.lineBreaks {
		b.WriteByte('\n')
	}
	e.raw(b.String())
	e.count++
}

// dtm writes DTM+q in format 303 (or 304 when seconds are set) at UTC.
func (e *edifactWriter) dtm(q string, t time.Time) error {
	t = t.UTC()
	if t.Nanosecond() != 0 {
		return fmt.Errorf("DTM+%s %s has a fraction of a second; MSCONS holds whole seconds at most", q, t.Format(time.RFC3339Nano))
	}
	if t.Second() != 0 {
		e.seg("DTM", []string{q, t.Format("20060102150405") + "+00", "304"})
		return nil
	}
	e.seg("DTM", []string{q, t.Format("200601021504") + "+00", "303"})
	return nil
}

func (e *edifactWriter) message(n int, d metering.Delivery, recv metering.BdewCode, o WriteOptions) error {
	if err := d.Validate(); err != nil {
		return err
	}
	op := d.Scope.Operator()
	if s, _, ok := d.Source.Mscons(); ok && s != op {
		return fmt.Errorf("source sender %s differs from the scope's operator %s; an MSCONS message names one (NAD+MS)", s, op)
	}
	kind := KindInterval
	if len(d.Readings) > 0 {
		kind = KindPoint
	}
	code, ok := writtenPID[pidKey{d.Sparte, kind}]
	if !ok {
		return fmt.Errorf("no Prüfidentifikator for %s %s values; MSCONS carries electricity and gas", d.Sparte, kind)
	}
	if code == "13025" && !d.MeloID.IsZero() {
		code = "13018"
	}
	unit := "KWH"
	if d.Unit == metering.UnitM3 {
		unit = "MTQ"
	}
	doc := fmt.Sprintf("MS%d", n)
	if _, r, ok := d.Source.Mscons(); ok {
		doc = r
	}
	var docDate time.Time
	label := d.Version.IsWellFormed()
	if label {
		s := d.Version.String()
		t, err := time.Parse("20060102150405", s)
		if len(s) != 14 || err != nil {
			return fmt.Errorf("version %s is not a CCYYMMDDHHMMSS label that DTM+293 (format 304) can carry", s)
		}
		docDate = t
		if !o.DocumentDate.IsZero() {
			docDate = o.DocumentDate
		}
	} else {
		ms := int64(d.Version.Uint64())
		if ms%1000 != 0 {
			return fmt.Errorf("version %d derives from a document date with milliseconds; DTM+137 holds whole seconds", ms)
		}
		docDate = time.UnixMilli(ms)
	}
	ref := strconv.Itoa(n)
	e.count = 0
	e.seg("UNH", []string{ref}, []string{"MSCONS", "D", "04B", "UN", "2.4c"})
	e.seg("BGM", []string{"7"}, []string{doc}, []string{"9"})
	if err := e.dtm("137", docDate); err != nil {
		return err
	}
	e.seg("RFF", []string{"Z13", code})
	e.seg("NAD", []string{"MS"}, []string{op.String(), "", "293"})
	e.seg("NAD", []string{"MR"}, []string{recv.String(), "", "293"})
	e.seg("UNS", []string{"D"})
	e.seg("NAD", []string{"DP"})
	loc := d.MaloID.String()
	if !d.MeloID.IsZero() {
		loc = d.MeloID.String()
	}
	e.seg("LOC", []string{"172"}, []string{loc})
	if label {
		e.seg("DTM", []string{"293", d.Version.String() + "+00", "304"})
	}
	e.seg("LIN", []string{"1"})
	e.seg("PIA", []string{"5"}, []string{d.Obis.String(), "SRW"})
	value := func(q metering.Quality, v string) error {
		c, ok := q.MarketCode()
		if !ok {
			return fmt.Errorf("quality %s has no MSCONS QTY qualifier", q)
		}
		if e.seps.dec == ',' {
			v = strings.Replace(v, ".", ",", 1)
		}
		e.seg("QTY", []string{c, v, unit})
		return nil
	}
	for _, iv := range d.Intervals {
		if err := value(iv.Quality, iv.Value.String()); err != nil {
			return err
		}
		if err := minutes(iv.From, iv.To); err != nil {
			return err
		}
		_ = e.dtm("163", iv.From)
		_ = e.dtm("164", iv.To)
	}
	for _, rd := range d.Readings {
		if err := value(rd.Quality, rd.Value.String()); err != nil {
			return err
		}
		if err := minutes(rd.At); err != nil {
			return err
		}
		_ = e.dtm("7", rd.At)
	}
	e.seg("UNT", []string{strconv.Itoa(e.count + 1)}, []string{ref})
	return e.err
}

type pidKey struct {
	sparte metering.Sparte
	kind   Kind
}

// writtenPID is the Prüfidentifikator Write gives each kind of delivery.
var writtenPID = map[pidKey]string{
	{metering.SparteStrom, KindInterval}: "13025",
	{metering.SparteGas, KindInterval}:   "13008",
	{metering.SparteStrom, KindPoint}:    "13017",
	{metering.SparteGas, KindPoint}:      "13002",
}

func minutes(ts ...time.Time) error {
	for _, t := range ts {
		if t.Second() != 0 || t.Nanosecond() != 0 {
			return fmt.Errorf("instant %s is not a whole minute (DTM format 303)", t.UTC().Format(time.RFC3339Nano))
		}
	}
	return nil
}
