package mscons_test

import (
	"fmt"
	"strings"
	"time"
)

// This file is a small MSCONS text generator for the tests, written
// independently of mscons.Write: the tests state what each generated
// message means and check the reader against that, so a shared mistake in
// reader and writer cannot hide.

var berlin = func() *time.Location {
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return l
}()

// seps are the service characters a generated interchange uses.
type seps struct{ comp, elem, dec, rel, term byte }

var (
	defaultSeps = seps{':', '+', '.', '?', '\''}
	commaSeps   = seps{':', '+', ',', '?', '\''}
	// oddSeps shares none of the defaults.
	oddSeps = seps{'#', '*', ',', '!', '~'}
)

// gval is one QTY group.
type gval struct {
	qual, value, unit string
	from, to, at      time.Time // at: DTM+7 for Zählerstände
	sts               []string  // whole segments' data, e.g. "Z32++Z92"
	local             bool      // write instants at their Berlin offset instead of +00
}

// gmsg is one message; the zero fields take the defaults in render.
type gmsg struct {
	ref, doc, function, cancels string
	docDate                     string // DTM+137 value incl. offset, format 303
	pid                         string
	sender                      string
	loc                         string // LOC+172 id; "-" writes LOC+172 with no id element
	version                     string // DTM+293 digits (format 304, +00); "" none
	obis, product               string // PIA+5 code and type
	values                      []gval
	access, seq                 string // UNH DE0068 and S010 ("1:C", "2", "3:F")
	repeatHeader                bool   // a continuation part repeats BGM … UNS+D
	noUNS                       bool   // the header lacks its UNS+D
	bare                        bool   // values only: no NAD+DP, LOC, LIN, PIA
	countDelta                  int    // added to UNT's count
}

// interchange renders messages as one interchange with separators s; nl
// writes a line break (CRLF when crlf) after each segment.
type interchange struct {
	s          seps
	nl, crlf   bool
	ref        string
	msgs       []gmsg
	unzDelta   int
	noUNA      bool
	rawBetween string // written verbatim between messages (tests of the frame)
}

func (ic interchange) render() string {
	var b strings.Builder
	s := ic.s
	if s == (seps{}) {
		s = defaultSeps
	}
	brk := ""
	if ic.nl {
		brk = "\n"
		if ic.crlf {
			brk = "\r\n"
		}
	}
	// esc releases the service characters in a component.
	esc := func(v string) string {
		var o strings.Builder
		for i := 0; i < len(v); i++ {
			switch v[i] {
			case s.comp, s.elem, s.rel, s.term:
				o.WriteByte(s.rel)
			}
			o.WriteByte(v[i])
		}
		return o.String()
	}
	n := 0
	// seg writes a segment from elements given as components; components
	// are escaped, so "+00" offsets come out released.
	seg := func(tag string, elems ...[]string) {
		b.WriteString(tag)
		for _, e := range elems {
			b.WriteByte(s.elem)
			for j, c := range e {
				if j > 0 {
					b.WriteByte(s.comp)
				}
				b.WriteString(esc(c))
			}
		}
		b.WriteByte(s.term)
		b.WriteString(brk)
		n++
	}
	if !ic.noUNA {
		fmt.Fprintf(&b, "UNA%c%c%c%c %c%s", s.comp, s.elem, s.dec, s.rel, s.term, brk)
	}
	ref := ic.ref
	if ref == "" {
		ref = "IC1"
	}
	seg("UNB", []string{"UNOC", "3"}, []string{"9910125000002", "500"}, []string{"9904768000008", "500"}, []string{"250301", "0800"}, []string{ref}, nil, []string{"TL"})
	for i, m := range ic.msgs {
		if i > 0 {
			b.WriteString(ic.rawBetween)
		}
		n = 0
		mref := m.ref
		if mref == "" {
			mref = fmt.Sprintf("M%d", i+1)
		}
		unh := [][]string{{mref}, {"MSCONS", "D", "04B", "UN", "2.4c"}}
		if m.seq != "" {
			unh = append(unh, []string{m.access}, strings.Split(m.seq, ":"))
		}
		seg("UNH", unh...)
		if m.seq == "" || strings.HasPrefix(m.seq, "1:") || m.repeatHeader {
			doc := m.doc
			if doc == "" {
				doc = "DOC-" + mref
			}
			fn := m.function
			if fn == "" {
				fn = "9"
			}
			seg("BGM", []string{"7"}, []string{doc}, []string{fn})
			dd := m.docDate
			if dd == "" {
				dd = "202503010800+00"
			}
			seg("DTM", []string{"137", dd, "303"})
			if m.cancels != "" {
				seg("RFF", []string{"ACW", m.cancels})
			}
			p := m.pid
			if p == "" {
				p = "13025"
			}
			seg("RFF", []string{"Z13", p})
			sender := m.sender
			if sender == "" {
				sender = "9910125000002"
			}
			seg("NAD", []string{"MS"}, []string{sender, "", "293"})
			seg("NAD", []string{"MR"}, []string{"9904768000008", "", "293"})
			if !m.noUNS {
				seg("UNS", []string{"D"})
			}
		}
		if !m.bare && (m.loc != "" || len(m.values) > 0) {
			seg("NAD", []string{"DP"})
			switch m.loc {
			case "-":
				seg("LOC", []string{"172"})
			case "":
				seg("LOC", []string{"172"}, []string{"41373559241"})
			default:
				seg("LOC", []string{"172"}, []string{m.loc})
			}
			if m.version != "" {
				seg("DTM", []string{"293", m.version + "+00", "304"})
			}
			seg("LIN", []string{"1"})
			obis, prod := m.obis, m.product
			if obis == "" {
				obis = "1-1:1.29.0"
			}
			if prod == "" {
				prod = "SRW"
			}
			seg("PIA", []string{"5"}, []string{obis, prod})
		}
		for _, v := range m.values {
			q := []string{v.qual, strings.Replace(v.value, ".", string(s.dec), 1)}
			if v.unit != "" {
				q = append(q, v.unit)
			}
			seg("QTY", q)
			if !v.from.IsZero() {
				seg("DTM", []string{"163", dtm303(v.from, v.local), "303"})
			}
			if !v.to.IsZero() {
				seg("DTM", []string{"164", dtm303(v.to, v.local), "303"})
			}
			if !v.at.IsZero() {
				seg("DTM", []string{"7", dtm303(v.at, v.local), "303"})
				seg("DTM", []string{"9", dtm303(v.at.Add(36*time.Hour), v.local), "303"})
			}
			for _, st := range v.sts {
				parts := strings.Split(st, "+")
				el := make([][]string, len(parts))
				for i, p := range parts {
					el[i] = []string{p}
				}
				if len(parts) == 1 {
					el = [][]string{{parts[0]}}
				}
				seg("STS", el...)
			}
		}
		seg("UNT", []string{fmt.Sprint(n + 1 + m.countDelta)}, []string{mref})
	}
	seg("UNZ", []string{fmt.Sprint(len(ic.msgs) + ic.unzDelta)}, []string{ref})
	return b.String()
}

// dtm303 writes CCYYMMDDHHMM+ZZ at UTC, or at the Berlin offset of t.
func dtm303(t time.Time, local bool) string {
	if !local {
		return t.UTC().Format("200601021504") + "+00"
	}
	l := t.In(berlin)
	_, off := l.Zone()
	return l.Format("200601021504") + fmt.Sprintf("+%02d", off/3600)
}

// series returns n values of step from start with values "i.5" and
// qualifier 220, at local offsets when local.
func series(start time.Time, step time.Duration, n int, unit string, local bool) []gval {
	out := make([]gval, n)
	for i := range out {
		f := start.Add(time.Duration(i) * step)
		out[i] = gval{qual: "220", value: fmt.Sprintf("%d.5", i), unit: unit, from: f, to: f.Add(step), local: local}
	}
	return out
}

// localDay returns [00:00, 24:00) local of a Berlin date and the number of
// quarter hours in it, computed from the zone database rather than from a
// table.
func localDay(y int, m time.Month, d, hour int) (time.Time, time.Time) {
	from := time.Date(y, m, d, hour, 0, 0, 0, berlin)
	to := time.Date(y, m, d+1, hour, 0, 0, 0, berlin)
	return from.UTC(), to.UTC()
}
