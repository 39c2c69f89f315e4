package mscons

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/metering"
)

// builder turns the segments of one message into deliveries. It stops at
// the first rule a segment breaks (err) and is then only drained.
type builder struct {
	r   *Reader
	m   Message
	err *MessageError

	ordinal  int // position in the current part, UNH = 1
	segments int // all parts together
	parts    int

	header  bool // before UNS+D
	repeat  bool // a continuation part repeating the header
	storno  bool
	once    uint8  // the headerOnce segments read, by index
	cancels string // RFF+ACW
	pid     pid
	pidOK   bool
	other   string // a Prüfidentifikator that is not a reading
	version metering.Version

	loc      *location
	ch       *channel
	val      *value // the open QTY group, nil or &valBuf
	valBuf   value
	channels []*channel
	byKey    map[chanKey]*channel
}

type location struct {
	malo     metering.MaloID
	melo     metering.MeloID
	version  metering.Version
	labelled bool // version is the group's own DTM+293, not the header's
}

type chanKey struct {
	malo    metering.MaloID
	melo    metering.MeloID
	obis    metering.ObisCode
	version metering.Version
}

// channel is one OBIS channel of one location; sts[i] is the STS detail of
// value i ("" for none).
type channel struct {
	key       chanKey
	unit      metering.Unit
	grid      metering.Resolution // a Lastgang's step, set by its first value
	intervals []metering.Interval
	readings  []metering.Reading
	sts       []string
}

// value is a QTY group (SG10) until its DTM and STS segments are read.
type value struct {
	at          segment // the QTY segment's position, for errors (its data is gone)
	ordinal     int
	quality     metering.Quality
	v           decimal.Decimal
	unit        metering.Unit
	from, to, t time.Time
	sts         []string
}

// headerOnce are the header segments a message states once: the document,
// its date (the derived version), the version, the Prüfidentifikator and the
// sender (the operator of the version scope). A second one is refused, not
// read over the first.
var headerOnce = [...]string{"BGM", "DTM+137", "DTM+293", "RFF+Z13", "NAD+MS"}

func (r *Reader) newBuilder(ref string) *builder {
	return &builder{r: r, m: Message{Interchange: r.interchange, Ref: ref}, parts: 1, header: true, ordinal: 1}
}

// refuse records the first refusal of the message and returns it.
func (b *builder) refuse(s segment, rule, hint string, err error) *MessageError {
	if b.err != nil {
		return b.err
	}
	b.err = &MessageError{Interchange: b.m.Interchange, Ref: b.m.Ref, Document: b.m.Document, Pruefidentifikator: b.m.Pruefidentifikator,
		Tag: s.tag, Ordinal: b.ordinal, Line: s.line, Offset: s.off, Rule: rule, Hint: hint, Err: err}
	b.release()
	return b.err
}

// release drops what a refused message collected, so skipping the rest
// holds nothing.
func (b *builder) release() { b.channels, b.byKey, b.ch, b.val, b.loc = nil, nil, nil, nil, nil }

func (b *builder) feed(s segment) {
	if b.header {
		b.headerSegment(s)
		return
	}
	if b.repeat || (s.tag == "BGM" && b.ordinal == 2 && b.parts > 1) {
		b.repeatedHeader(s)
		return
	}
	if b.other != "" && s.tag != "PIA" {
		return // refused at the first PIA (naming the product) or at UNT
	}
	b.bodySegment(s)
}

func (b *builder) headerSegment(s segment) {
	key := s.tag
	if s.tag != "BGM" {
		key += "+" + s.get(0, 0)
	}
	if k := slices.Index(headerOnce[:], key); k >= 0 {
		if b.once&(1<<k) != 0 {
			b.refuse(s, key+" twice in the header", "a message states it once; ask the sender which one holds", nil)
			return
		}
		b.once |= 1 << k
	}
	switch s.tag {
	case "BGM":
		b.m.DocumentType, b.m.Document = s.get(0, 0), s.get(1, 0)
		switch s.get(2, 0) {
		case "", "9":
		case "1":
			b.storno = true
		default:
			b.refuse(s, fmt.Sprintf("message function %q (BGM DE1225) is neither 9 (original) nor 1 (storno)", s.get(2, 0)), "", nil)
		}
	case "DTM":
		switch s.get(0, 0) {
		case "137":
			t, err := parseDTM(s.get(0, 1), s.get(0, 2), b.r.opt.TimeZone)
			if err != nil {
				b.refuse(s, "DTM+137 document date", "", err)
				return
			}
			b.m.DocumentDate = t
		case "293":
			b.version = b.versionOf(s)
		}
	case "RFF":
		switch s.get(0, 0) {
		case "Z13":
			b.m.Pruefidentifikator = s.get(0, 1)
			b.pid, b.pidOK = pids[b.m.Pruefidentifikator]
			if b.pidOK {
				b.m.Kind = b.pid.kind
			}
		case "ACW":
			b.cancels = s.get(0, 1)
		}
	case "NAD":
		switch s.get(0, 0) {
		case "MS":
			op, err := metering.ParseBdewCode(s.get(1, 0))
			if err != nil {
				b.refuse(s, "NAD+MS sender is not a Marktpartner-ID", "the sender is the operator of the version scope; it must pass the BDEW or GS1 check", err)
				return
			}
			b.m.Sender = op
		case "MR":
			b.m.Receiver = s.get(1, 0)
		}
	case "CTA", "COM", "CUX", "FTX":
	case "UNS":
		b.endHeader(s)
	default:
		b.refuse(s, "segment "+s.tag+" is not part of an MSCONS header", "", nil)
	}
}

func (b *builder) endHeader(s segment) {
	b.header = false
	switch {
	case s.get(0, 0) != "D":
		b.refuse(s, fmt.Sprintf("UNS+%s: the header ends with UNS+D", s.get(0, 0)), "", nil)
	case b.storno:
		cancels := "names no cancelled document (RFF+ACW)"
		if b.cancels != "" {
			cancels = "cancels document " + b.cancels
		}
		b.refuse(s, "storno (BGM DE1225 = 1) "+cancels,
			"the store never deletes a reading: deliver the corrected values at a higher version (DTM+293) instead", ErrStorno)
	case b.m.Pruefidentifikator == "":
		b.refuse(s, "message names no Prüfidentifikator (RFF+Z13)", "without it the reader cannot tell a Lastgang from a Zählerstand", nil)
	case !b.pidOK:
		if why, known := notReadings[b.m.Pruefidentifikator]; known {
			b.other = b.m.Pruefidentifikator + " (" + why + ")"
		} else {
			b.other = b.m.Pruefidentifikator + " (not a Prüfidentifikator this reader maps to readings)"
		}
	case b.m.Sender.IsZero():
		b.refuse(s, "message names no sender (NAD+MS)", "the sender is the operator of the version scope", nil)
	}
}

// repeatedHeader checks a continuation part's copy of the header against
// the first part's.
func (b *builder) repeatedHeader(s segment) {
	b.repeat = true
	mismatch := func(what, got, want string) {
		b.refuse(s, fmt.Sprintf("part %d of the split message repeats the header with %s %q, part 1 has %q", b.parts, what, got, want), "", nil)
	}
	switch {
	case s.tag == "BGM" && s.get(1, 0) != b.m.Document:
		mismatch("document", s.get(1, 0), b.m.Document)
	case s.tag == "RFF" && s.get(0, 0) == "Z13" && s.get(0, 1) != b.m.Pruefidentifikator:
		mismatch("Prüfidentifikator", s.get(0, 1), b.m.Pruefidentifikator)
	case s.tag == "NAD" && s.get(0, 0) == "MS" && s.get(1, 0) != b.m.Sender.String():
		mismatch("sender", s.get(1, 0), b.m.Sender.String())
	case s.tag == "DTM" && s.get(0, 0) == "137":
		t, err := parseDTM(s.get(0, 1), s.get(0, 2), b.r.opt.TimeZone)
		if err != nil {
			b.refuse(s, "DTM+137 document date", "", err)
		} else if !t.Equal(b.m.DocumentDate) {
			mismatch("document date (DTM+137)", t.Format(time.RFC3339), b.m.DocumentDate.Format(time.RFC3339))
		}
	case s.tag == "DTM" && s.get(0, 0) == "293":
		if v := b.versionOf(s); b.err == nil && v != b.version {
			mismatch("version (DTM+293)", v.String(), b.version.String())
		}
	case s.tag == "UNS":
		b.repeat = false
	case s.tag == "NAD" && s.get(0, 0) != "MS" && s.get(0, 0) != "MR",
		s.tag != "BGM" && s.tag != "DTM" && s.tag != "RFF" && s.tag != "NAD" && s.tag != "CTA" && s.tag != "COM" && s.tag != "CUX" && s.tag != "FTX":
		// Values in a header that never ended would otherwise be skipped.
		b.refuse(s, fmt.Sprintf("segment %s in the header part %d repeats, before its UNS+D", s.tag, b.parts), "", nil)
	}
}

// twoLabels is the hint of a refusal for a second version label where one
// holds: taking either would guess which assertion the values are.
const twoLabels = "a message states one version for its values; ask the sender which one holds"

func (b *builder) versionOf(s segment) metering.Version {
	if f := s.get(0, 2); f != "304" {
		b.refuse(s, fmt.Sprintf("DTM+293 version has format %q", f), "the MSCONS version is format 304, CCYYMMDDHHMMSS?+00", nil)
		return metering.Version{}
	}
	t, err := parseDTM(s.get(0, 1), "304", nil)
	if err != nil {
		b.refuse(s, "DTM+293 version", "", err)
		return metering.Version{}
	}
	v, err := metering.ParseVersion(t.Format("20060102150405"))
	if err != nil {
		b.refuse(s, "DTM+293 version", "", err)
		return metering.Version{}
	}
	return v
}

func (b *builder) bodySegment(s segment) {
	switch s.tag {
	case "NAD":
		b.closeValue()
		if s.get(0, 0) == "DP" {
			b.loc, b.ch = nil, nil
		}
	case "LOC":
		b.closeValue()
		b.location(s)
	case "DTM":
		b.dtm(s)
	case "LIN":
		b.closeValue()
		if b.loc == nil {
			b.refuse(s, "LIN before LOC+172: the values name no location", "", nil)
			return
		}
		b.ch = nil
	case "PIA":
		b.pia(s)
	case "QTY":
		b.qty(s)
	case "STS":
		if b.val == nil {
			b.refuse(s, "STS outside a value (QTY group)", "", nil)
			return
		}
		detail := s.get(0, 0) + "=" + s.get(2, 0)
		if st := s.get(1, 0); st != "" {
			detail = s.get(0, 0) + ":" + st + "=" + s.get(2, 0)
		}
		b.val.sts = append(b.val.sts, detail)
	case "RFF", "CCI", "CAV", "MEA", "FTX":
		// Device number, characteristics, free text: they neither identify
		// nor change a value.
	default:
		b.refuse(s, "segment "+s.tag+" is not part of an MSCONS message body", "", nil)
	}
}

func (b *builder) location(s segment) {
	if q := s.get(0, 0); q != "172" {
		b.refuse(s, fmt.Sprintf("LOC+%s names no Marktlokation or Messlokation", q),
			"only LOC+172 (Meldepunkt) identifies a reading of a location; LOC+237 and others are balancing areas", nil)
		return
	}
	id := s.get(1, 0)
	loc := &location{version: b.version}
	switch len(id) {
	case 0:
		b.refuse(s, "LOC+172 names no location (the identifier is empty)", "ask the sender for the MaLo-ID or MeLo-ID of these values", nil)
		return
	case 11:
		malo, err := metering.ParseMaloID(id)
		if err != nil {
			b.refuse(s, "LOC+172 is not a valid Marktlokations-ID", "", err)
			return
		}
		loc.malo = malo
	case 33:
		melo, err := metering.ParseMeloID(id)
		if err != nil {
			b.refuse(s, "LOC+172 is not a valid Messlokations-ID", "", err)
			return
		}
		if b.r.opt.MaloOf == nil {
			b.refuse(s, "LOC+172 names Messlokation "+melo.String()+" and readings are stored on a Marktlokation",
				"tell the reader the MaLo of this MeLo (Options.MaloOf; msql import --malo-of FILE)", nil)
			return
		}
		malo, err := b.r.opt.MaloOf(melo)
		if err != nil {
			b.refuse(s, "no Marktlokation for Messlokation "+melo.String(), "", err)
			return
		}
		if malo.IsZero() {
			b.refuse(s, "no Marktlokation for Messlokation "+melo.String(), "Options.MaloOf returned none", nil)
			return
		}
		loc.malo, loc.melo = malo, melo
	default:
		b.refuse(s, fmt.Sprintf("LOC+172 %q is neither an 11-digit MaLo-ID nor a 33-character MeLo-ID", id),
			"a Tranche or another identifier is not a location this store holds readings of", nil)
		return
	}
	b.loc, b.ch = loc, nil
}

func (b *builder) dtm(s segment) {
	q := s.get(0, 0)
	if q == "293" {
		// A version is never skipped: read where it belongs, refused
		// elsewhere, since a lost label would let an older delivery win.
		if b.val != nil || b.loc == nil || b.ch != nil {
			b.refuse(s, "DTM+293 (version) outside its place after LOC+172 and before LIN",
				"the version belongs to the location group (SG6) or the header", nil)
			return
		}
		v := b.versionOf(s)
		switch {
		case v.IsZero():
		case b.loc.labelled:
			b.refuse(s, fmt.Sprintf("DTM+293 version %q after %q in one location group", v, b.loc.version), twoLabels, nil)
		default:
			b.loc.version, b.loc.labelled = v, true
		}
		return
	}
	if b.val == nil {
		return // the period sent (SG6 DTM+163/164) and other dates bound nothing
	}
	var dst *time.Time
	switch q {
	case "163":
		dst = &b.val.from
	case "164":
		dst = &b.val.to
	case "7":
		dst = &b.val.t
	default:
		return // DTM+9 (reading date) and others do not place the value
	}
	if !dst.IsZero() {
		b.refuse(s, "DTM+"+q+" twice in one value (QTY group)", "", nil)
		return
	}
	t, err := parseDTM(s.get(0, 1), s.get(0, 2), b.r.opt.TimeZone)
	if err != nil {
		b.refuse(s, "DTM+"+q, "", err)
		return
	}
	*dst = t
}

func (b *builder) pia(s segment) {
	code, typ := s.get(1, 0), s.get(1, 1)
	if b.other != "" {
		b.refuse(s, fmt.Sprintf("Prüfidentifikator %s with product %s:%s is not a meter reading", b.other, code, typ),
			"import readings (Lastgang, Energiemenge, Zählerstand) only", ErrNotReading)
		return
	}
	if b.loc == nil {
		b.refuse(s, "PIA before LOC+172: the values name no location", "", nil)
		return
	}
	if q := s.get(0, 0); q != "5" {
		b.refuse(s, fmt.Sprintf("PIA+%s: the channel is named by PIA+5", q), "", nil)
		return
	}
	if typ != "SRW" && typ != "Z02" {
		b.refuse(s, fmt.Sprintf("product %s:%s of Prüfidentifikator %s is not an OBIS code (SRW or Z02)", code, typ, b.m.Pruefidentifikator),
			"only OBIS channels are readings; product codes such as AUA:Z08 are not", ErrNotReading)
		return
	}
	obis, err := metering.ParseObis(code)
	if err != nil {
		b.refuse(s, "PIA+5 is not an OBIS code", "", err)
		return
	}
	if want := obisMedium[b.pid.sparte]; obis.Medium() != want {
		b.refuse(s, fmt.Sprintf("OBIS %s has medium %d, Prüfidentifikator %s (%s) is %s (medium %d)",
			obis, obis.Medium(), b.m.Pruefidentifikator, b.pid.name, b.pid.sparte, want),
			"the message contradicts itself; ask the sender which is right", nil)
		return
	}
	k := chanKey{malo: b.loc.malo, melo: b.loc.melo, obis: obis, version: b.loc.version}
	if c := b.byKey[k]; c != nil {
		b.ch = c
		return
	}
	if b.byKey == nil {
		b.byKey = map[chanKey]*channel{}
	}
	b.ch = &channel{key: k}
	b.byKey[k] = b.ch
	b.channels = append(b.channels, b.ch)
}

func (b *builder) qty(s segment) {
	b.closeValue()
	if b.ch == nil {
		b.refuse(s, "QTY before PIA: the value names no channel", "", nil)
		return
	}
	code := s.get(0, 0)
	q, ok := qualities[code]
	if !ok {
		b.refuse(s, fmt.Sprintf("QTY qualifier %q has no quality in this store", code),
			"known are 220 (MEASURED), 67 (SUBSTITUTED), 187 (ESTIMATED), Z18 (PRELIMINARY), 20 (FAULTY)", nil)
		return
	}
	v, err := parseValue(s.get(0, 1), b.r.sc.seps.dec)
	if err != nil {
		b.refuse(s, "QTY value", "", err)
		return
	}
	b.valBuf = value{at: segment{tag: s.tag, line: s.line, off: s.off}, ordinal: b.ordinal, quality: q, v: v, sts: b.valBuf.sts[:0]}
	val := &b.valBuf
	if u := s.get(0, 2); u != "" {
		if val.unit, ok = units[u]; !ok {
			b.refuse(s, fmt.Sprintf("QTY unit %q is not an energy or volume unit this store holds", u), "known are KWH and MTQ (m³)", nil)
			return
		}
	}
	b.val = val
}

// closeValue completes the open QTY group into an interval or a reading.
func (b *builder) closeValue() {
	v := b.val
	if v == nil || b.err != nil {
		return
	}
	b.val = nil
	at := v.at
	refuse := func(rule, hint string, err error) {
		ord := b.ordinal
		b.ordinal = v.ordinal
		b.refuse(at, rule, hint, err)
		b.ordinal = ord
	}
	unit := v.unit
	if unit.IsZero() {
		if b.pid.sparte != metering.SparteStrom {
			refuse(fmt.Sprintf("QTY names no unit and %s values may be m³ or kWh", b.pid.sparte), "the sender must state the unit (MTQ or KWH)", nil)
			return
		}
		unit = metering.UnitKWh
	}
	if err := b.pid.sparte.AllowsUnit(unit); err != nil {
		refuse(fmt.Sprintf("QTY unit disagrees with Prüfidentifikator %s (%s)", b.m.Pruefidentifikator, b.pid.name), "", err)
		return
	}
	c := b.ch
	if c.unit.IsZero() {
		c.unit = unit
	} else if c.unit != unit {
		refuse(fmt.Sprintf("QTY unit %s differs from %s of earlier values on channel %s", unit, c.unit, c.key.obis), "", nil)
		return
	}
	sts := strings.Join(v.sts, ",")
	switch b.pid.kind {
	case KindInterval:
		if v.from.IsZero() || v.to.IsZero() {
			refuse("interval value has no DTM+163 (start) and DTM+164 (end)", "", nil)
			return
		}
		iv, err := metering.NewInterval(v.from, v.to, v.v, v.quality)
		if err != nil {
			refuse("QTY value", "", err)
			return
		}
		if b.pid.grid {
			step := iv.To.Sub(iv.From)
			if c.grid.IsZero() {
				g, ok := gridOf(step)
				if !ok {
					refuse(fmt.Sprintf("Lastgang interval [%s, %s) is %s long, not a grid of whole minutes dividing an hour", iv.From.Format(time.RFC3339), iv.To.Format(time.RFC3339), step), "", nil)
					return
				}
				c.grid = g
			}
			if fixed, _ := c.grid.Fixed(); step != fixed || iv.From.Unix()%int64(fixed/time.Second) != 0 {
				refuse(fmt.Sprintf("Lastgang interval [%s, %s) is off the channel's %s grid", iv.From.Format(time.RFC3339), iv.To.Format(time.RFC3339), c.grid),
					"a Lastgang has one fixed step; the sender's clock or file is wrong", nil)
				return
			}
		}
		c.intervals = append(c.intervals, iv)
	case KindPoint:
		if v.t.IsZero() {
			refuse("Zählerstand has no DTM+7 (the instant it counts for)", "", nil)
			return
		}
		rd, err := metering.NewReading(v.t, v.v, v.quality)
		if err != nil {
			refuse("QTY value", "", err)
			return
		}
		c.readings = append(c.readings, rd)
	}
	c.sts = append(c.sts, sts)
}

// finish turns the collected channels into deliveries at the final UNT.
func (b *builder) finish(unt segment) (*Message, error) {
	b.closeValue()
	if b.err != nil {
		return nil, b.err
	}
	if b.header {
		return nil, b.refuse(unt, "message ends in its header: no UNS+D", "", nil)
	}
	if b.other != "" {
		return nil, b.refuse(unt, "Prüfidentifikator "+b.other+" is not a meter reading", "import readings (Lastgang, Energiemenge, Zählerstand) only", ErrNotReading)
	}
	now := b.r.opt.Now()
	b.m.Parts = b.parts
	for _, c := range b.channels {
		version := c.key.version
		if version.IsZero() {
			if b.m.DocumentDate.IsZero() {
				return nil, b.refuse(unt, "message has neither a version (DTM+293) nor a document date (DTM+137) to derive one from", "", nil)
			}
			v, err := metering.VersionArrival(b.m.DocumentDate)
			if err != nil {
				return nil, b.refuse(unt, "version derived from the document date (DTM+137)", "", err)
			}
			version = v
		}
		ds, err := b.deliveries(c, version, now)
		if err != nil {
			return nil, b.refuse(unt, fmt.Sprintf("values of %s %s", c.key.malo, c.key.obis), "", err)
		}
		b.m.Deliveries = append(b.m.Deliveries, ds...)
	}
	return &b.m, nil
}

// deliveries splits one channel by Bilanzierungsmonat: a delivery lies in
// one version scope.
func (b *builder) deliveries(c *channel, version metering.Version, now time.Time) ([]metering.Delivery, error) {
	ref := b.m.Document
	if ref == "" {
		ref = b.m.Ref
	}
	src, err := metering.SourceMscons(b.m.Sender, ref)
	if err != nil {
		return nil, err
	}
	sparte := b.pid.sparte
	months := map[metering.Date]*metering.Delivery{}
	var order []metering.Date
	runs := map[metering.Date]*stsRuns{}
	n := max(len(c.intervals), len(c.readings))
	var lo, hi time.Time // the bounds of mon
	var mon metering.Date
	for i := range n {
		var at, end time.Time
		if c.intervals != nil {
			at, end = c.intervals[i].From, c.intervals[i].To
		} else {
			at, end = c.readings[i].At, c.readings[i].At
		}
		if at.Before(lo) || !at.Before(hi) {
			mon = metering.BalancingMonth(at, sparte)
			lo, hi = metering.MonthBounds(mon.Year, mon.Month, sparte)
		}
		d := months[mon]
		if d == nil {
			d = &metering.Delivery{MaloID: c.key.malo, MeloID: c.key.melo, Obis: c.key.obis, Sparte: sparte, Unit: c.unit, Resolution: c.grid,
				Source: src, Scope: metering.ScopeFor(b.m.Sender, at, sparte), Version: version, RecordedAt: now}
			note := fmt.Sprintf("interchange %s, message %s, document %s, Prüfidentifikator %s", b.m.Interchange, b.m.Ref, b.m.Document, b.m.Pruefidentifikator)
			d.Provenance = metering.Provenance{{OccurredAt: now, EventType: "INGESTED", Actor: metering.SourceKindMSCONS, Note: &note}}
			if c.intervals != nil {
				d.Intervals = make([]metering.Interval, 0, n-i)
			} else {
				d.Readings = make([]metering.Reading, 0, n-i)
			}
			months[mon] = d
			runs[mon] = &stsRuns{}
			order = append(order, mon)
		}
		if c.intervals != nil {
			d.Intervals = append(d.Intervals, c.intervals[i])
		} else {
			d.Readings = append(d.Readings, c.readings[i])
		}
		runs[mon].add(c.sts[i], at, end)
	}
	slices.SortFunc(order, func(a, b metering.Date) int { return a.Compare(b) })
	out := make([]metering.Delivery, 0, len(order))
	occurred := b.m.DocumentDate
	if occurred.IsZero() {
		occurred = now
	}
	for _, mon := range order {
		d := months[mon]
		d.Provenance = append(d.Provenance, runs[mon].events(occurred, b.m.Sender.String())...)
		if err := d.Validate(); err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, nil
}

// stsRuns groups consecutive values with the same STS details into one
// provenance event, so a month of substituted values is one entry, not
// thousands.
type stsRuns struct {
	list []stsRun
}

type stsRun struct {
	detail   string
	from, to time.Time
	n        int
}

func (s *stsRuns) add(detail string, from, to time.Time) {
	if k := len(s.list) - 1; k >= 0 && s.list[k].detail == detail {
		s.list[k].to = to
		s.list[k].n++
		return
	}
	s.list = append(s.list, stsRun{detail: detail, from: from, to: to, n: 1})
}

func (s *stsRuns) events(at time.Time, sender string) metering.Provenance {
	var out metering.Provenance
	for _, r := range s.list {
		if r.detail == "" {
			continue
		}
		note := fmt.Sprintf("STS %s on %d values in [%s, %s]", r.detail, r.n, r.from.Format(time.RFC3339), r.to.Format(time.RFC3339))
		out = append(out, metering.ProvenanceEvent{OccurredAt: at, EventType: "MSCONS_STATUS", Actor: sender, Note: &note})
	}
	return out
}
