package mscons_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
)

// The expectations below were read off the sample files by hand (segment
// positions counted in the text, values and instants converted by hand),
// not taken from the reader's output.

func sample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/mscons/" + name)
	require.NoError(t, err)
	return string(b)
}

// requireRefusal checks a refusal's position and cause.
func requireRefusal(t *testing.T, me *mscons.MessageError, ref, doc, tag string, ordinal, line int, rule string) {
	t.Helper()
	require.Equal(t, ref, me.Ref, "%v", me)
	require.Equal(t, doc, me.Document, "%v", me)
	require.Equal(t, tag, me.Tag, "%v", me)
	require.Equal(t, ordinal, me.Ordinal, "%v", me)
	require.Equal(t, line, me.Line, "%v", me)
	require.Contains(t, me.Error(), rule)
	require.ErrorIs(t, me, mscons.ErrRefused)
}

// SAMPLE01 as published: its document date is format 203, a local time
// without offset, and no DTM+293 gives a version; the version would be
// derived from that date, so the message is refused at DTM+137 (UNH 1,
// BGM 2, DTM 3; the file has no line breaks).
func TestSampleMsconsconverterLastgang(t *testing.T) {
	res := readAll(t, strings.NewReader(sample(t, "msconsconverter/MSCONS_TL_SAMPLE01.txt")), opts())
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 1)
	requireRefusal(t, res.refused[0], "1", "13337815E25-1", "DTM", 3, 1, `format "203" carries no UTC offset`)
	require.Contains(t, res.refused[0].Error(), "--time-zone Europe/Berlin", "the refusal names the way round it")
}

// With Options.TimeZone the published SAMPLE01's document date, 12 January
// 2016 13:47 without an offset, is read as Berlin wall-clock time (+01 in
// January: 12:47 UTC), so the message gets past segment 3 to its next
// defect: the sender 1234567889111 in NAD+MS (segment 5) fails its check
// digit.
func TestSampleMsconsconverterLastgangInAZone(t *testing.T) {
	o := opts()
	o.TimeZone = metering.Berlin()
	res := readAll(t, strings.NewReader(sample(t, "msconsconverter/MSCONS_TL_SAMPLE01.txt")), o)
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 1)
	requireRefusal(t, res.refused[0], "1", "13337815E25-1", "NAD", 5, 1, "1234567889111")
}

// The first day of SAMPLE01 with only its sender and Prüfidentifikator
// repaired — the document date left as published, format 203 — reads with
// Options.TimeZone Europe/Berlin to the same document date, and so the same
// derived version, as with the date's offset written out
// (TestSampleMsconsconverterFirstDay).
func TestSampleMsconsconverterLocalDocumentDate(t *testing.T) {
	text := sample01Repaired(t)
	text = strings.Replace(text, "DTM+137:201601121347?+01:303'", "DTM+137:201601121347:203'", 1)
	cut := strings.Index(text, "QTY+220:0'DTM+163:201512012000?+01:303'")
	require.Positive(t, cut)
	text = text[:cut] + "UNT+254+1'UNZ+1+13337815E25'"
	o := sample01Opts()
	res := readAll(t, strings.NewReader(text), o)
	require.Len(t, res.refused, 1, "without a zone the local date is refused")
	requireRefusal(t, res.refused[0], "1", "13337815E25-1", "DTM", 3, 1, "--time-zone")

	o.TimeZone = metering.Berlin()
	res = readAll(t, strings.NewReader(text), o)
	require.NoError(t, res.err)
	require.Empty(t, res.refused)
	require.Len(t, res.msgs, 1)
	m := res.msgs[0]
	require.Equal(t, utc("2016-01-12T12:47:00Z"), m.DocumentDate)
	require.Equal(t, "1452602820000", m.Deliveries[0].Version.String())
	require.Len(t, m.Deliveries[0].Intervals, 80)
}

// A value's local time (format 203) the zone shows twice — 02:30 on the
// night the clocks go back — names no single instant: refused, with both
// readings, even with a zone; one the clocks skip likewise.
func TestLocalTimeTheZoneRepeatsOrSkips(t *testing.T) {
	text := sample01Repaired(t)
	cut := strings.Index(text, "QTY+220:0'DTM+163:201512010100?+01:303'")
	require.Positive(t, cut)
	head := text[:cut]
	o := sample01Opts()
	o.TimeZone = metering.Berlin()
	for local, rule := range map[string]string{
		"201510250230": "2015-10-25 02:30:00 occurs twice in Europe/Berlin (the clocks go back): 2015-10-25T02:30:00+02:00 or 2015-10-25T02:30:00+01:00",
		"201503290230": "2015-03-29 02:30:00 does not exist in Europe/Berlin (the clocks skip it)",
	} {
		in := head + "QTY+220:1'DTM+163:" + local + ":203'DTM+164:201512010115?+01:303'UNT+29+1'UNZ+1+13337815E25'"
		res := readAll(t, strings.NewReader(in), o)
		require.NoError(t, res.err)
		require.Len(t, res.refused, 1, local)
		requireRefusal(t, res.refused[0], "1", "13337815E25-1", "DTM", 27, 1, rule)
	}
}

// sample01Repaired is SAMPLE01 with three defects repaired in memory: the
// document date given its offset (+01, as every other date of the file),
// the sender's check digit (BDEW and GS1 both want 5, the file has 1), and
// Prüfidentifikator 13008 (Lastgang Gas) replaced by 13018 (Lastgang
// Messlokation), which is what its electricity OBIS code 1-1:1.10.0 and
// 33-character LOC+172 say.
func sample01Repaired(t *testing.T) string {
	text := sample(t, "msconsconverter/MSCONS_TL_SAMPLE01.txt")
	for old, new := range map[string]string{
		"DTM+137:201601121347:203'":  "DTM+137:201601121347?+01:303'",
		"NAD+MS+1234567889111::293'": "NAD+MS+1234567889115::293'",
		"RFF+Z13:13008'":             "RFF+Z13:13018'",
	} {
		require.Equal(t, 1, strings.Count(text, old), old)
		text = strings.Replace(text, old, new, 1)
	}
	return text
}

var (
	sample01Melo = must(metering.ParseMeloID("US0001062600000001000000022345671"))
	sample01Malo = must(metering.ParseMaloID("41373559241"))
)

func sample01Opts() mscons.Options {
	o := opts()
	o.MaloOf = func(m metering.MeloID) (metering.MaloID, error) {
		if m != sample01Melo {
			return metering.MaloID{}, errors.New("unknown MeLo")
		}
		return sample01Malo, nil
	}
	return o
}

// The repaired SAMPLE01 still holds real defects: value 81 runs 20:00-20:16
// (+01) on 1 December (see TestSampleMsconsconverterFirstDayOffGrid), and
// on 20 December an interval runs from 16:45 back to 16:00. The message is
// refused at the first. Without MaloOf it is refused earlier, at the MeLo in
// LOC (segment 9).
func TestSampleMsconsconverterLastgangRepaired(t *testing.T) {
	text := sample01Repaired(t)
	res := readAll(t, strings.NewReader(text), opts())
	require.NoError(t, res.err)
	require.Len(t, res.refused, 1)
	requireRefusal(t, res.refused[0], "1", "13337815E25-1", "LOC", 9, 1, "US0001062600000001000000022345671")

	res = readAll(t, strings.NewReader(text), sample01Opts())
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 1)
	requireRefusal(t, res.refused[0], "1", "13337815E25-1", "QTY", 254, 1, "[2015-12-01T19:00:00Z, 2015-12-01T19:16:00Z) is off the channel's PT15M grid")
}

// The first day of the repaired SAMPLE01 (its message cut after the 96th
// value, UNT counting 13 + 96 × 3 + 1 = 302 segments) holds another real
// defect: value 81 runs 20:00-20:16 and value 82 20:16-20:30 (+01). A
// Lastgang has one fixed step, so the message is refused at value 81's QTY,
// segment 14 + 80 × 3 = 254.
func TestSampleMsconsconverterFirstDayOffGrid(t *testing.T) {
	text := sample01Repaired(t)
	cut := strings.Index(text, "QTY+220:0'DTM+163:201512020000?+01:303'")
	require.Positive(t, cut)
	text = text[:cut] + "UNT+302+1'UNZ+1+13337815E25'"
	res := readAll(t, strings.NewReader(text), sample01Opts())
	require.NoError(t, res.err)
	require.Len(t, res.refused, 1)
	requireRefusal(t, res.refused[0], "1", "13337815E25-1", "QTY", 254, 1, "[2015-12-01T19:00:00Z, 2015-12-01T19:16:00Z) is off the channel's PT15M grid")
}

// The first 80 values of the repaired SAMPLE01 (00:00-20:00 local on 1
// December 2015, UNT counting 13 + 80 × 3 + 1 = 254 segments): zero except
// 09:45-15:00 local (22 values), read with the file's decimal comma. Their
// total, 11.262, was summed from the file's text with awk.
func TestSampleMsconsconverterFirstDay(t *testing.T) {
	text := sample01Repaired(t)
	cut := strings.Index(text, "QTY+220:0'DTM+163:201512012000?+01:303'")
	require.Positive(t, cut)
	text = text[:cut] + "UNT+254+1'UNZ+1+13337815E25'"

	res := readAll(t, strings.NewReader(text), sample01Opts())
	require.NoError(t, res.err)
	require.Empty(t, res.refused)
	require.Len(t, res.msgs, 1)
	m := res.msgs[0]
	require.Equal(t, "13337815E25", m.Interchange)
	require.Equal(t, "12100006987265", m.Receiver)
	require.Equal(t, utc("2016-01-12T12:47:00Z"), m.DocumentDate)
	require.Len(t, m.Deliveries, 1)
	d := m.Deliveries[0]
	require.Equal(t, sample01Malo, d.MaloID)
	require.Equal(t, sample01Melo, d.MeloID)
	require.Equal(t, "1-1:1.10.0", d.Obis.String())
	require.Equal(t, metering.UnitKWh, d.Unit)
	require.Equal(t, "1234567889115:2015-12", d.Scope.String())
	// No DTM+293: the version is the document date in Unix milliseconds
	// (date -u -d 2016-01-12T12:47:00Z +%s = 1452602820).
	require.Equal(t, "1452602820000", d.Version.String())
	require.False(t, d.Version.IsWellFormed())
	require.Equal(t, metering.ResolutionPT15M, d.Resolution)
	require.Len(t, d.Intervals, 80)
	require.Equal(t, utc("2015-11-30T23:00:00Z"), d.Intervals[0].From)
	require.Equal(t, utc("2015-12-01T19:00:00Z"), d.Intervals[79].To)
	byLocal := map[string]string{}
	total, zeros := dec("0"), 0
	for i, iv := range d.Intervals {
		require.Equal(t, metering.QualityMeasured, iv.Quality)
		require.Equal(t, 15*time.Minute, iv.To.Sub(iv.From))
		if i > 0 {
			require.Equal(t, d.Intervals[i-1].To, iv.From)
		}
		byLocal[iv.From.In(time.FixedZone("", 3600)).Format("15:04")] = iv.Value.String()
		total = total.Add(iv.Value)
		if iv.Value.IsZero() {
			zeros++
		}
	}
	require.Equal(t, "0.9", byLocal["09:45"])
	require.Equal(t, "0.148", byLocal["10:00"])
	require.Equal(t, "0.4", byLocal["11:00"])
	require.Equal(t, "1.023", byLocal["13:15"])
	require.Equal(t, "0.9", byLocal["15:00"])
	require.Equal(t, "0", byLocal["15:15"])
	require.Equal(t, "11.262", total.String())
	require.Equal(t, 80-22, zeros)
}

// Two messages of Prüfidentifikator 13022 (Ausfallarbeit) with product
// AUA:Z08: both refused at PIA (UNH 1, BGM 2, DTM 3, RFF 4, NAD 5, NAD 6,
// UNS 7, NAD 8, LOC 9, DTM 10-12, LIN 13, PIA 14), naming both; UNZ+2
// matches.
func TestSampleMsconsconverterAusfallarbeit(t *testing.T) {
	res := readAll(t, strings.NewReader(sample(t, "msconsconverter/MSCONS_TL_Multiple_LOC_SAMPLE.txt")), opts())
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 2)
	for i, me := range res.refused {
		ref := []string{"1", "2"}[i]
		requireRefusal(t, me, ref, "E-121808993A-"+ref, "PIA", 14, 1, "13022")
		require.Contains(t, me.Error(), "AUA:Z08")
		require.ErrorIs(t, me, mscons.ErrNotReading)
		require.Equal(t, "13022", me.Pruefidentifikator)
	}
}

// The MIG 2.4c examples: every message's NAD+MS 9920455302123 fails both
// check digit procedures (BDEW wants 7, GS1 wants 6), so each message is
// refused there. The simple example's NAD+MS is segment 6 on line 8; the
// others' is segment 8 on lines 10 and 42.
func TestSampleRestify(t *testing.T) {
	for _, tc := range []struct {
		file  string
		ords  []int
		lines []int
	}{
		{"mscons-message-example-simple.txt", []int{6}, []int{8}},
		{"mscons-message-example.txt", []int{8, 8}, []int{10, 42}},
		{"mscons-message-example-una-spec.txt", []int{8, 8}, []int{10, 42}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := readAll(t, strings.NewReader(sample(t, "mscons-restify/"+tc.file)), opts())
			require.NoError(t, res.err)
			require.Empty(t, res.msgs)
			require.Len(t, res.refused, len(tc.ords))
			for i, me := range res.refused {
				requireRefusal(t, me, "1", "MSI5422", "NAD", tc.ords[i], tc.lines[i], "NAD+MS sender")
				var ie *metering.IdentifierError
				require.ErrorAs(t, me, &ie)
				require.Equal(t, "9920455302123", ie.Value)
			}
		})
	}
}
