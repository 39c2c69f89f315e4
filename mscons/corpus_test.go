package mscons_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
)

func read(t *testing.T, ic interchange) result {
	t.Helper()
	return readAll(t, strings.NewReader(ic.render()), opts())
}

// one reads an interchange that must give exactly one message.
func one(t *testing.T, ic interchange) *mscons.Message {
	t.Helper()
	res := read(t, ic)
	require.NoError(t, res.err)
	require.Empty(t, res.refused)
	require.Len(t, res.msgs, 1)
	return res.msgs[0]
}

// refusedOnly reads an interchange whose only message is refused.
func refusedOnly(t *testing.T, ic interchange) *mscons.MessageError {
	t.Helper()
	res := read(t, ic)
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 1)
	return res.refused[0]
}

func requireContiguous(t *testing.T, ivs []metering.Interval, from, to time.Time, step time.Duration) {
	t.Helper()
	require.Equal(t, from, ivs[0].From)
	require.Equal(t, to, ivs[len(ivs)-1].To)
	for i, iv := range ivs {
		require.Equal(t, step, iv.To.Sub(iv.From), "interval %d", i)
		if i > 0 {
			require.Equal(t, ivs[i-1].To, iv.From, "interval %d", i)
		}
	}
}

// DST days at local offsets: the spring Sunday has 92 quarter hours, the
// autumn Sunday 100, the hour 02:00-03:00 written twice, first at +02 then
// at +01. The day bounds and counts come from the zone database.
func TestDSTDays(t *testing.T) {
	for _, tc := range []struct {
		name     string
		day      int
		m        time.Month
		n        int
		from, to string
	}{
		{"spring", 30, time.March, 92, "2025-03-29T23:00:00Z", "2025-03-30T22:00:00Z"},
		{"autumn", 26, time.October, 100, "2025-10-25T22:00:00Z", "2025-10-26T23:00:00Z"},
		{"plain", 1, time.December, 96, "2025-11-30T23:00:00Z", "2025-12-01T23:00:00Z"},
	} {
		t.Run("dst="+tc.name, func(t *testing.T) {
			from, to := localDay(2025, tc.m, tc.day, 0)
			require.Equal(t, utc(tc.from), from)
			require.Equal(t, utc(tc.to), to)
			vals := series(from, 15*time.Minute, tc.n, "KWH", true)
			text := interchange{nl: true, msgs: []gmsg{{values: vals, version: "20251201000000"}}}.render()
			if tc.name == "autumn" {
				require.Contains(t, text, "DTM+163:202510260200?+02:303'")
				require.Contains(t, text, "DTM+163:202510260200?+01:303'")
			}
			res := readAll(t, strings.NewReader(text), opts())
			require.NoError(t, res.err)
			require.Empty(t, res.refused)
			d := res.msgs[0].Deliveries
			require.Len(t, d, 1)
			require.Len(t, d[0].Intervals, tc.n)
			requireContiguous(t, d[0].Intervals, from, to, 15*time.Minute)
			require.Equal(t, "20251201000000", d[0].Version.String())
		})
	}
}

// A gas Lastgang at hours on gas days (06:00-06:00 local): the Saturday
// gas day before the autumn switch has 25 hours, and the hours before
// 06:00 on 1 November belong to October's Bilanzierungsmonat, so one
// message gives two deliveries in two scopes.
func TestGasDays(t *testing.T) {
	from, to := localDay(2025, time.October, 25, 6)
	require.Equal(t, utc("2025-10-25T04:00:00Z"), from)
	require.Equal(t, utc("2025-10-26T05:00:00Z"), to)
	m := one(t, interchange{s: commaSeps, msgs: []gmsg{{pid: "13008", obis: "7-20:99.33.17", values: series(from, time.Hour, 25, "MTQ", true)}}})
	require.Len(t, m.Deliveries, 1)
	d := m.Deliveries[0]
	require.Equal(t, metering.SparteGas, d.Sparte)
	require.Equal(t, metering.UnitM3, d.Unit)
	require.Equal(t, metering.ResolutionPT1H, d.Resolution)
	require.Len(t, d.Intervals, 25)
	requireContiguous(t, d.Intervals, from, to, time.Hour)
	require.Equal(t, "9910125000002:2025-10", d.Scope.String())

	// 1 November 00:00-12:00 local (CET): six hours of October's gas month,
	// six of November's.
	start := utc("2025-10-31T23:00:00Z")
	m = one(t, interchange{msgs: []gmsg{{pid: "13008", obis: "7-0:13.29.0", values: series(start, time.Hour, 12, "KWH", false)}}})
	require.Len(t, m.Deliveries, 2)
	require.Equal(t, "9910125000002:2025-10", m.Deliveries[0].Scope.String())
	require.Equal(t, "9910125000002:2025-11", m.Deliveries[1].Scope.String())
	require.Len(t, m.Deliveries[0].Intervals, 6)
	require.Len(t, m.Deliveries[1].Intervals, 6)
	require.Equal(t, utc("2025-11-01T05:00:00Z"), m.Deliveries[1].Intervals[0].From)
	require.Equal(t, metering.UnitKWh, m.Deliveries[1].Unit)
	for _, d := range m.Deliveries {
		require.NoError(t, d.Validate())
	}

	// An electricity message over the same hours stays in November.
	m = one(t, interchange{msgs: []gmsg{{values: series(start, time.Hour, 12, "", false)}}})
	require.Len(t, m.Deliveries, 1)
	require.Equal(t, "9910125000002:2025-11", m.Deliveries[0].Scope.String())
}

// Values read exactly whatever the decimal mark; digits beyond
// decimal(18,6) refuse the message, they are not rounded.
func TestValues(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	val := func(v string) gval {
		return gval{qual: "220", value: v, from: at, to: at.Add(15 * time.Minute)}
	}
	for _, s := range []seps{defaultSeps, commaSeps, oddSeps} {
		for _, v := range []string{"0", "-0.5", "1.662", "999999999999.999999", "0.000001", "00012.10"} {
			t.Run(string(s.dec)+v, func(t *testing.T) {
				m := one(t, interchange{s: s, msgs: []gmsg{{values: []gval{val(v)}}}})
				require.Equal(t, dec(v).String(), m.Deliveries[0].Intervals[0].Value.String())
			})
		}
	}
	for _, tc := range []struct {
		s    seps
		v    string
		rule string
	}{
		{defaultSeps, "1000000000000", "more than 12 integer digits"},
		{commaSeps, "0.1234567", "more than 6 decimals"},
		{defaultSeps, "1e5", "not a number"},
		{defaultSeps, "+1", "not a number"},
		{defaultSeps, "", "not a number"},
		{defaultSeps, ".5", "not a number"},
		{defaultSeps, "5.", "not a number"},
		{defaultSeps, "1.000.000", "not a number"},
	} {
		t.Run("refused="+tc.v, func(t *testing.T) {
			ic := interchange{s: tc.s, msgs: []gmsg{{values: []gval{val(tc.v)}}}}
			if tc.s == commaSeps {
				// The value is written with a full stop in a comma file.
				ic.msgs[0].values[0].value = "0#1234567"
				text := strings.Replace(ic.render(), "0#1234567", "0,1234567", 1)
				res := readAll(t, strings.NewReader(text), opts())
				require.Len(t, res.refused, 1)
				require.ErrorContains(t, res.refused[0], tc.rule)
				text = strings.Replace(ic.render(), "0#1234567", "0.5", 1)
				res = readAll(t, strings.NewReader(text), opts())
				require.Len(t, res.refused, 1)
				require.ErrorContains(t, res.refused[0], "not a number with decimal mark")
				return
			}
			me := refusedOnly(t, ic)
			require.Equal(t, "QTY", me.Tag)
			require.ErrorContains(t, me, tc.rule)
		})
	}
}

// Qualifiers map by the table; others refuse the message.
func TestQualities(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	for code, q := range map[string]metering.Quality{
		"220": metering.QualityMeasured, "67": metering.QualitySubstituted, "187": metering.QualityEstimated,
		"Z18": metering.QualityPreliminary, "20": metering.QualityFaulty,
	} {
		m := one(t, interchange{msgs: []gmsg{{values: []gval{{qual: code, value: "1", from: at, to: at.Add(time.Hour)}}}}})
		require.Equal(t, q, m.Deliveries[0].Intervals[0].Quality, code)
	}
	for _, code := range []string{"201", "79", "Z30", "Z31", "221", ""} {
		me := refusedOnly(t, interchange{msgs: []gmsg{{values: []gval{{qual: code, value: "1", from: at, to: at.Add(time.Hour)}}}}})
		require.Equal(t, "QTY", me.Tag)
		require.ErrorContains(t, me, "QTY qualifier")
	}
}

// Escapes and other separators: a document number with every service
// character survives, and OBIS codes need their colon released only where
// it is the component separator.
func TestSeparatorsAndEscapes(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	v := []gval{{qual: "220", value: "2.25", unit: "KWH", from: at, to: at.Add(15 * time.Minute)}}
	doc := `A:B+C?D'E#F*G!H~I`
	for name, ic := range map[string]interchange{
		"default":       {msgs: []gmsg{{doc: doc, values: v}}},
		"default-noUNA": {noUNA: true, msgs: []gmsg{{doc: doc, values: v}}},
		"comma-crlf":    {s: commaSeps, nl: true, crlf: true, msgs: []gmsg{{doc: doc, values: v}}},
		"odd":           {s: oddSeps, nl: true, msgs: []gmsg{{doc: doc, values: v}}},
	} {
		t.Run(name, func(t *testing.T) {
			text := ic.render()
			if name == "default" {
				require.Contains(t, text, `PIA+5+1-1?:1.29.0:SRW'`)
				require.Contains(t, text, `BGM+7+A?:B?+C??D?'E#F*G!H~I+9'`)
			}
			if name == "odd" {
				require.Contains(t, text, `PIA*5*1-1:1.29.0#SRW~`)
			}
			m := one(t, ic)
			require.Equal(t, doc, m.Document)
			require.Equal(t, "1-1:1.29.0", m.Deliveries[0].Obis.String())
			require.Equal(t, "2.25", m.Deliveries[0].Intervals[0].Value.String())
			_, ref, _ := m.Deliveries[0].Source.Mscons()
			require.Equal(t, doc, ref)
		})
	}
}

// Versions: DTM+293 as written (UTC digits); without it the document date
// in Unix milliseconds, so a later document wins among derived versions,
// a re-read gives the same version, and any label compares above any
// derived version.
func TestVersions(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	v := []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}
	msgs := []gmsg{
		{docDate: "202503020800+00", values: v},                            // derived, earlier
		{docDate: "202503030900+01", values: v},                            // derived, later (08:00Z)
		{docDate: "202503011200+00", version: "20250301120000", values: v}, // label, earliest document
		{docDate: "202503040800+00", version: "20250304080000", values: v}, // correction at a higher label
		{docDate: "202503020800+00", values: v},                            // redelivery of the first
	}
	res := read(t, interchange{msgs: msgs})
	require.NoError(t, res.err)
	require.Empty(t, res.refused)
	require.Len(t, res.msgs, 5)
	ver := func(i int) metering.Version { return res.msgs[i].Deliveries[0].Version }
	require.Equal(t, "1740902400000", ver(0).String()) // date -u -d 2025-03-02T08:00Z +%s
	require.Equal(t, "1740988800000", ver(1).String()) // 2025-03-03T08:00Z
	require.Equal(t, "20250301120000", ver(2).String())
	require.Equal(t, "20250304080000", ver(3).String())
	require.Equal(t, ver(0), ver(4))
	require.Equal(t, -1, ver(0).Compare(ver(1)))
	require.Equal(t, -1, ver(1).Compare(ver(2)), "a derived version, though later, must compare below a label")
	require.Equal(t, -1, ver(2).Compare(ver(3)))
	for _, m := range res.msgs {
		require.Equal(t, res.msgs[0].Deliveries[0].Scope, m.Deliveries[0].Scope)
	}

	// A label at another offset is its UTC digits.
	text := interchange{msgs: []gmsg{{values: v}}}.render()
	text = strings.Replace(text, "UNS+D'NAD+DP'LOC+172+41373559241'", "UNS+D'NAD+DP'LOC+172+41373559241'DTM+293:20250301090000?+01:304'", 1)
	text = strings.Replace(text, "UNT+15+", "UNT+16+", 1)
	res = readAll(t, strings.NewReader(text), opts())
	require.Empty(t, res.refused)
	require.Equal(t, "20250301080000", res.msgs[0].Deliveries[0].Version.String())

	// Neither a label nor a document date: refused.
	text = strings.Replace(interchange{msgs: []gmsg{{values: v}}}.render(), "DTM+137:202503010800?+00:303'", "", 1)
	text = strings.Replace(text, "UNT+15+", "UNT+14+", 1)
	res = readAll(t, strings.NewReader(text), opts())
	require.Len(t, res.refused, 1)
	require.ErrorContains(t, res.refused[0], "neither a version (DTM+293) nor a document date")
}

// A refused message never stops the next: a MaLo with a transposed digit,
// an empty LOC+172, an unknown Prüfidentifikator, a Storno — each between
// good messages.
func TestRefusalsDoNotStopTheInterchange(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	v := []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}
	good := gmsg{values: v}
	bad := []struct {
		name string
		m    gmsg
		tag  string
		is   error
		says []string
	}{
		{"check-digit", gmsg{loc: "41373559214", values: v}, "LOC", metering.ErrInvalid, []string{"41373559214", "check digit"}},
		{"empty-loc", gmsg{loc: "-", values: v}, "LOC", nil, []string{"LOC+172 names no location"}},
		{"empty-loc-id", gmsg{loc: "-", values: v}, "LOC", nil, []string{"LOC+172 names no location"}},
		{"tranche", gmsg{loc: "4137355924", values: v}, "LOC", nil, []string{"neither an 11-digit MaLo-ID nor a 33-character MeLo-ID"}},
		{"unknown-pid", gmsg{pid: "13099", values: v}, "PIA", mscons.ErrNotReading, []string{"13099", "1-1:1.29.0:SRW"}},
		{"ausfallarbeit", gmsg{pid: "13022", obis: "AUA", product: "Z08", values: v}, "PIA", mscons.ErrNotReading, []string{"13022", "AUA:Z08", "Ausfallarbeit"}},
		{"product-code", gmsg{obis: "AUA", product: "Z08", values: v}, "PIA", mscons.ErrNotReading, []string{"AUA:Z08"}},
		{"storno", gmsg{function: "1", cancels: "DOC-OLD", values: v}, "UNS", mscons.ErrStorno, []string{"DOC-OLD", "higher version"}},
		{"storno-unnamed", gmsg{function: "1", values: v}, "UNS", mscons.ErrStorno, []string{"names no cancelled document"}},
		{"medium", gmsg{obis: "7-0:13.29.0", values: v}, "PIA", nil, []string{"medium 7", "13025"}},
		{"unit", gmsg{values: []gval{{qual: "220", value: "1", unit: "MTQ", from: at, to: at.Add(15 * time.Minute)}}}, "QTY", metering.ErrUnitNotAllowed, []string{"M3"}},
		{"power", gmsg{values: []gval{{qual: "220", value: "1", unit: "KWT", from: at, to: at.Add(15 * time.Minute)}}}, "QTY", nil, []string{"KWT"}},
		{"gas-no-unit", gmsg{pid: "13008", obis: "7-0:13.29.0", values: []gval{{qual: "220", value: "1", from: at, to: at.Add(time.Hour)}}}, "QTY", nil, []string{"m³ or kWh"}},
		{"sender", gmsg{sender: "9910125000003", values: v}, "NAD", metering.ErrInvalid, []string{"9910125000003"}},
		{"no-end", gmsg{values: []gval{{qual: "220", value: "1", from: at}}}, "QTY", nil, []string{"DTM+164"}},
		{"unt-count", gmsg{values: v, countDelta: 1}, "UNT", nil, []string{"UNT counts"}},
		{"off-grid", gmsg{values: []gval{{qual: "220", value: "1", from: at, to: at.Add(10 * time.Minute)}, {qual: "220", value: "1", from: at.Add(10 * time.Minute), to: at.Add(25 * time.Minute)}}}, "QTY", nil, []string{"off the channel's PT10M grid"}},
		{"header-only", gmsg{}, "UNT", nil, []string{"no UNS+D"}},
		{"dtm-twice", gmsg{values: v}, "DTM", nil, []string{"DTM+164 twice in one value"}},
		{"unt-ref", gmsg{values: v}, "UNT", nil, []string{`UNT reference "MX" does not match UNH's "M2"`}},
		{"not-mscons", gmsg{values: v}, "UNH", nil, []string{`message type "UTILMD" is not MSCONS`}},
		{"bad-sequence", gmsg{values: v, access: "S", seq: "x:C"}, "UNH", nil, []string{`sequence of transfers "x"`}},
		{"split-no-access", gmsg{values: v, seq: "1:C"}, "UNH", nil, []string{"no common access reference"}},
		{"no-pid", gmsg{values: v}, "UNS", nil, []string{"names no Prüfidentifikator"}},
		{"function", gmsg{function: "5", values: v}, "BGM", nil, []string{`message function "5"`}},
		{"loc-237", gmsg{values: v}, "LOC", nil, []string{"LOC+237 names no Marktlokation"}},
		{"overlap", gmsg{values: []gval{v[0], v[0]}}, "UNT", metering.ErrOverlap, []string{"overlap"}},
		{"version-in-value", gmsg{values: []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}}, "DTM", nil, []string{"DTM+293 (version) outside its place"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			ic := interchange{nl: true, msgs: []gmsg{good, tc.m, good}}
			text := ic.render()
			switch tc.name {
			case "unt-ref", "not-mscons", "no-pid", "loc-237", "dtm-twice":
				second := strings.Index(text, "UNH+M2")
				r := map[string][2]string{
					"unt-ref":    {"UNT+15+M2'", "UNT+15+MX'"},
					"not-mscons": {"UNH+M2+MSCONS:", "UNH+M2+UTILMD:"},
					"no-pid":     {"RFF+Z13:13025'\n", "RFF+Z14:13025'\n"},
					"loc-237":    {"LOC+172+", "LOC+237+"},
					"dtm-twice":  {"UNT+15+M2'", "DTM+164:202503010030?+00:303'\nUNT+16+M2'"},
				}[tc.name]
				require.Contains(t, text[second:], r[0])
				text = text[:second] + strings.Replace(text[second:], r[0], r[1], 1)
			case "header-only":
				second := strings.Index(text, "UNH+M2")
				text = text[:second] + strings.Replace(text[second:], "UNS+D'\nUNT+8+M2'", "UNT+7+M2'", 1)
			case "empty-loc-id":
				text = strings.Replace(text, "LOC+172'", "LOC+172+'", 1)
			case "version-in-value":
				second := strings.Index(text, "UNH+M2")
				i := second + strings.Index(text[second:], "QTY+")
				text = text[:i] + strings.Replace(text[i:], "UNT+15+M2'", "DTM+293:20250301000000?+00:304'\nUNT+16+M2'", 1)
			}
			res := readAll(t, strings.NewReader(text), opts())
			require.NoError(t, res.err)
			require.Len(t, res.msgs, 2)
			require.Equal(t, "M1", res.msgs[0].Ref)
			require.Equal(t, "M3", res.msgs[1].Ref)
			require.Len(t, res.refused, 1)
			me := res.refused[0]
			require.Equal(t, "M2", me.Ref)
			require.Equal(t, "IC1", me.Interchange)
			require.Equal(t, tc.tag, me.Tag, "%v", me)
			require.Positive(t, me.Ordinal)
			// Line of the refused segment: count lines up to its offset.
			require.Equal(t, strings.Count(text[:me.Offset], "\n")+1, me.Line)
			require.True(t, strings.HasPrefix(text[me.Offset:], tc.tag), "offset %d points at %q", me.Offset, text[me.Offset:min(len(text), int(me.Offset)+10)])
			if tc.is != nil {
				require.ErrorIs(t, me, tc.is)
			}
			for _, s := range tc.says {
				require.ErrorContains(t, me, s)
			}
		})
	}
}

// Zählerstände: the instant is DTM+7 (DTM+9, the reading date, does not
// place the value); a reading without DTM+7 is refused.
func TestZaehlerstand(t *testing.T) {
	at := utc("2025-02-28T23:00:00Z")
	m := one(t, interchange{msgs: []gmsg{{pid: "13017", obis: "1-1:1.8.0", values: []gval{
		{qual: "220", value: "12345.678", unit: "KWH", at: at, local: true},
		{qual: "67", value: "12400", unit: "KWH", at: at.Add(24 * time.Hour)},
	}}}})
	require.Equal(t, mscons.KindPoint, m.Kind)
	require.Len(t, m.Deliveries, 1)
	d := m.Deliveries[0]
	require.Empty(t, d.Intervals)
	require.Equal(t, []metering.Reading{
		{At: at, Value: dec("12345.678"), Quality: metering.QualityMeasured},
		{At: at.Add(24 * time.Hour), Value: dec("12400"), Quality: metering.QualitySubstituted},
	}, d.Readings)
	require.Equal(t, "9910125000002:2025-03", d.Scope.String())

	me := refusedOnly(t, interchange{msgs: []gmsg{{pid: "13002", obis: "7-20:3.0.0", values: []gval{
		{qual: "220", value: "1", unit: "MTQ", from: at, to: at.Add(time.Hour)},
	}}}})
	require.ErrorContains(t, me, "DTM+7")
}

// STS details go into provenance, one event per run of equal details.
func TestStatusDetails(t *testing.T) {
	start := utc("2025-03-01T00:00:00Z")
	vals := series(start, 15*time.Minute, 6, "KWH", false)
	for i := 1; i <= 3; i++ {
		vals[i].qual = "67"
		vals[i].sts = []string{"Z32++Z92", "Z40++ZS9"}
	}
	vals[5].sts = []string{"Z34++ZA4"}
	m := one(t, interchange{msgs: []gmsg{{values: vals}}})
	p := m.Deliveries[0].Provenance
	require.Len(t, p, 3)
	require.Equal(t, "INGESTED", p[0].EventType)
	require.Contains(t, *p[0].Note, "message M1")
	require.Equal(t, "MSCONS_STATUS", p[1].EventType)
	require.Equal(t, "9910125000002", p[1].Actor)
	require.Equal(t, "STS Z32=Z92,Z40=ZS9 on 3 values in [2025-03-01T00:15:00Z, 2025-03-01T01:00:00Z]", *p[1].Note)
	require.Equal(t, "STS Z34=ZA4 on 1 values in [2025-03-01T01:15:00Z, 2025-03-01T01:30:00Z]", *p[2].Note)
	require.Equal(t, utc("2025-03-01T08:00:00Z"), p[1].OccurredAt)
	_, err := p.MarshalJSON()
	require.NoError(t, err)
}

// A file cut anywhere inside a message ends the stream with an error
// naming the message and wrapping io.ErrUnexpectedEOF; the messages before
// it were returned.
func TestCutShort(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	text := interchange{nl: true, msgs: []gmsg{{values: series(at, 15*time.Minute, 4, "", false)}, {values: series(at, 15*time.Minute, 4, "", false)}}}.render()
	second := strings.Index(text, "UNH+M2")
	untEnd := second + strings.Index(text[second:], "UNT+24+M2'") + len("UNT+24+M2'")
	for cut := second + 1; cut <= strings.LastIndexByte(text, '\''); cut++ {
		res := readAll(t, strings.NewReader(text[:cut]), opts())
		want := 1
		if cut >= untEnd {
			want = 2 // M2 complete, only UNZ cut off
		}
		require.Len(t, res.msgs, want, "cut at %d", cut)
		require.ErrorIs(t, res.err, io.ErrUnexpectedEOF, "cut at %d: %v", cut, res.err)
		require.ErrorIs(t, res.err, mscons.ErrSyntax)
		var se *mscons.SyntaxError
		require.ErrorAs(t, res.err, &se)
		if unhEnd := second + strings.IndexByte(text[second:], '\''); cut > unhEnd && cut < untEnd {
			require.Equal(t, "M2", se.Ref, "cut at %d", cut)
		}
	}
}

// UNZ's count and reference are checked after the messages.
func TestUNZ(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	v := []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}
	res := read(t, interchange{unzDelta: 1, msgs: []gmsg{{values: v}}})
	require.Len(t, res.msgs, 1)
	require.ErrorIs(t, res.err, mscons.ErrSyntax)
	require.ErrorContains(t, res.err, `UNZ counts "2" messages, the interchange has 1`)

	text := interchange{msgs: []gmsg{{values: v}}}.render()
	res = readAll(t, strings.NewReader(strings.Replace(text, "UNZ+1+IC1", "UNZ+1+IC2", 1)), opts())
	require.ErrorContains(t, res.err, `UNZ reference "IC2" does not match UNB's "IC1"`)

	// Two interchanges in one stream, the second with its own UNA.
	text = interchange{msgs: []gmsg{{values: v}}}.render() + "\n" + interchange{s: oddSeps, ref: "IC2", msgs: []gmsg{{values: v}}}.render()
	res = readAll(t, strings.NewReader(text), opts())
	require.NoError(t, res.err)
	require.Len(t, res.msgs, 2)
	require.Equal(t, "IC2", res.msgs[1].Interchange)

	for _, text := range []string{"", "\n", "UNA:+.? '", "UNH+1+MSCONS'"} {
		res = readAll(t, strings.NewReader(text), opts())
		require.ErrorIs(t, res.err, mscons.ErrSyntax, "%q", text)
	}
}

// Split messages: parts with one DE0068 and S010 1:C, 2, 3:F are joined,
// with or without a repeated header; a missing part refuses the message by
// its DE0068 and the next message is read.
func TestSplitMessages(t *testing.T) {
	start := utc("2025-03-01T00:00:00Z")
	vals := series(start, 15*time.Minute, 9, "KWH", false)
	parts := func(second gmsg) []gmsg {
		return []gmsg{
			{access: "SPLIT-1", seq: "1:C", values: vals[:3]},
			second,
			{access: "SPLIT-1", seq: "3:F", bare: true, values: vals[6:]},
		}
	}
	for name, second := range map[string]gmsg{
		"bare":          {access: "SPLIT-1", seq: "2", bare: true, values: vals[3:6]},
		"repeat-header": {access: "SPLIT-1", seq: "2", repeatHeader: true, doc: "DOC-M1", values: vals[3:6]},
	} {
		t.Run(name, func(t *testing.T) {
			res := read(t, interchange{msgs: parts(second)})
			require.NoError(t, res.err)
			require.Empty(t, res.refused)
			require.Len(t, res.msgs, 1)
			m := res.msgs[0]
			require.Equal(t, 3, m.Parts)
			require.Equal(t, "M1", m.Ref)
			require.Len(t, m.Deliveries, 1)
			requireContiguous(t, m.Deliveries[0].Intervals, start, start.Add(9*15*time.Minute), 15*time.Minute)
		})
	}

	at := utc("2025-03-01T00:00:00Z")
	good := gmsg{values: []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}}
	for name, tc := range map[string]struct {
		msgs []gmsg
		says string
	}{
		"missing-middle": {[]gmsg{parts(gmsg{})[0], parts(gmsg{})[2], good}, `split message "SPLIT-1" ends after part 1`},
		"missing-last":   {[]gmsg{parts(gmsg{})[0], good}, `split message "SPLIT-1" ends after part 1`},
		"orphan":         {[]gmsg{parts(gmsg{})[2], good}, `part 3 of split message "SPLIT-1" arrives without part 1`},
		"unended-header": {[]gmsg{parts(gmsg{})[0], {access: "SPLIT-1", seq: "2:F", repeatHeader: true, noUNS: true, doc: "DOC-M1", values: vals[3:6]}, good}, `segment NAD in the header part 2 repeats, before its UNS+D`},
		"other-header":   {[]gmsg{parts(gmsg{})[0], {access: "SPLIT-1", seq: "2:F", repeatHeader: true, doc: "OTHER", values: vals[3:6]}, good}, `repeats the header with document "OTHER"`},
	} {
		t.Run(name, func(t *testing.T) {
			res := read(t, interchange{msgs: tc.msgs})
			require.NoError(t, res.err)
			require.Len(t, res.refused, 1)
			require.ErrorContains(t, res.refused[0], tc.says)
			require.Len(t, res.msgs, 1)
			require.Equal(t, 1, res.msgs[0].Parts)
		})
	}
	// The split part at the end of the interchange.
	res := read(t, interchange{msgs: parts(gmsg{})[:1]})
	require.Len(t, res.refused, 1)
	require.ErrorContains(t, res.refused[0], `split message "SPLIT-1" ends after part 1`)
	require.NoError(t, res.err)
}

// Limits: a segment over MaxSegmentBytes ends the stream naming the limit;
// a message over MaxMessageSegments is refused and the next one read.
func TestLimits(t *testing.T) {
	start := utc("2025-03-01T00:00:00Z")
	big := gmsg{values: series(start, 15*time.Minute, 40, "", false)}
	small := gmsg{values: series(start, 15*time.Minute, 2, "", false)}
	o := opts()
	o.MaxMessageSegments = 100
	res := readAll(t, strings.NewReader(interchange{msgs: []gmsg{big, small}}.render()), o)
	require.NoError(t, res.err)
	require.Len(t, res.msgs, 1)
	require.Equal(t, "M2", res.msgs[0].Ref)
	require.Len(t, res.refused, 1)
	require.ErrorIs(t, res.refused[0], mscons.ErrLimit)
	require.ErrorContains(t, res.refused[0], "limit of 100 segments")

	o = opts()
	o.MaxSegmentBytes = 200
	res = readAll(t, strings.NewReader(interchange{msgs: []gmsg{small, {doc: strings.Repeat("X", 300), values: small.values}}}.render()), o)
	require.Len(t, res.msgs, 1)
	require.ErrorIs(t, res.err, mscons.ErrLimit)
	require.ErrorContains(t, res.err, "limit of 200 bytes")

	o.MaxSegmentBytes = -1
	_, err := mscons.NewReader(strings.NewReader(""), o).Next()
	require.ErrorContains(t, err, "must not be negative")
}

// A MeLo in LOC+172 is stored on the MaLo Options.MaloOf names; its error
// refuses the message.
func TestMeloResolution(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	v := []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}
	const id = "DE00056266802AO6G56M11SN51G21M24S"
	ic := interchange{msgs: []gmsg{{pid: "13018", loc: id, values: v}}}
	o := opts()
	o.MaloOf = func(m metering.MeloID) (metering.MaloID, error) {
		if m.String() == id {
			return metering.ParseMaloID("51238696781")
		}
		return metering.MaloID{}, errors.New("no such MeLo in the master data")
	}
	res := readAll(t, strings.NewReader(ic.render()), o)
	require.Empty(t, res.refused)
	d := res.msgs[0].Deliveries[0]
	require.Equal(t, "51238696781", d.MaloID.String())
	require.Equal(t, id, d.MeloID.String())

	ic.msgs[0].loc = "DE00056266802AO6G56M11SN51G21M24X"
	res = readAll(t, strings.NewReader(ic.render()), o)
	require.Len(t, res.refused, 1)
	require.ErrorContains(t, res.refused[0], "no such MeLo in the master data")
}

// DTM values: format 303 or 304 with an offset, a real calendar date.
func TestDates(t *testing.T) {
	at := utc("2025-03-01T12:00:00Z")
	text := interchange{msgs: []gmsg{{values: []gval{{qual: "220", value: "1", from: at, to: at.Add(time.Hour)}}}}}.render()
	const from = "DTM+163:202503011200?+00:303'"
	require.Contains(t, text, from)
	for dtm, want := range map[string]string{
		"DTM+163:202503011300?+01:303'":   "2025-03-01T12:00:00Z",
		"DTM+163:202503011230?+0030:303'": "2025-03-01T12:00:00Z",
		"DTM+163:202503011100?-01:303'":   "2025-03-01T12:00:00Z",
		"DTM+163:20250301120000?+00:304'": "2025-03-01T12:00:00Z",
		"DTM+163:202502301200?+00:303'":   "not a calendar date",
		"DTM+163:202503012400?+00:303'":   "not a calendar date",
		"DTM+163:202513011200?+00:303'":   "not a calendar date",
		"DTM+163:202503011200:303'":       "no UTC offset",
		"DTM+163:202503011200?+1:303'":    "no UTC offset",
		"DTM+163:202503011200:203'":       `format "203" carries no UTC offset`,
		"DTM+163:2025030112?+00:303'":     "starts with 12 digits",
		"DTM+163:20250301120001?+00:304'": "59m59s long, not a grid",
	} {
		res := readAll(t, strings.NewReader(strings.Replace(text, from, dtm, 1)), opts())
		require.NoError(t, res.err)
		if strings.HasSuffix(want, "Z") {
			require.Empty(t, res.refused, dtm)
			require.Equal(t, utc(want), res.msgs[0].Deliveries[0].Intervals[0].From, dtm)
			continue
		}
		require.Len(t, res.refused, 1, dtm)
		require.ErrorContains(t, res.refused[0], want, dtm)
	}
}

// Text is decoded by UNB's syntax identifier: UNOC is ISO 8859-1, UNOW
// UTF-8; bytes a character set does not explain end the stream rather than
// reaching a stored message reference altered. A UTF-8 byte order mark
// before the interchange is skipped.
func TestCharacterSets(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	text := interchange{msgs: []gmsg{{doc: "Z#hler", values: []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}}}}.render()
	for name, tc := range map[string]struct {
		syntax, doc, want, fails string
	}{
		"latin1":      {"UNOC", "Z\xe4hler", "Zähler", ""},
		"utf8":        {"UNOW", "Zähler", "Zähler", ""},
		"utf8-broken": {"UNOW", "Z\xe4hler", "", "not valid UTF-8"},
		"ascii":       {"UNOA", "Z\xe4hler", "", "outside ASCII"},
		"latin2":      {"UNOD", "Zahler", "", `syntax identifier "UNOD"`},
		"bom":         {"\xef\xbb\xbfUNOC", "Zahler", "Zahler", ""},
	} {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(text, "Z#hler", tc.doc, 1)
			if strings.HasPrefix(tc.syntax, "\xef") {
				in = "\xef\xbb\xbf" + in
			} else {
				in = strings.Replace(in, "UNB+UNOC:3", "UNB+"+tc.syntax+":3", 1)
			}
			res := readAll(t, strings.NewReader(in), opts())
			if tc.fails != "" {
				require.ErrorIs(t, res.err, mscons.ErrSyntax)
				require.ErrorContains(t, res.err, tc.fails)
				require.Empty(t, res.msgs)
				return
			}
			require.NoError(t, res.err)
			require.Len(t, res.msgs, 1)
			require.Equal(t, tc.want, res.msgs[0].Document)
			_, ref, _ := res.msgs[0].Deliveries[0].Source.Mscons()
			require.Equal(t, tc.want, ref)
		})
	}
}
