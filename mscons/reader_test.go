package mscons_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
)

var testNow = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func opts() mscons.Options { return mscons.Options{Now: func() time.Time { return testNow }} }

// result is what reading a whole stream gave: the messages, the refusals and
// the error that ended it (nil at a clean io.EOF).
type result struct {
	msgs    []*mscons.Message
	refused []*mscons.MessageError
	err     error
}

func readAll(t testing.TB, src io.Reader, o mscons.Options) result {
	t.Helper()
	r := mscons.NewReader(src, o)
	var res result
	for i := 0; ; i++ {
		require.Less(t, i, 1_000_000, "reader does not terminate")
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return res
		}
		var me *mscons.MessageError
		if errors.As(err, &me) {
			require.Nil(t, m)
			res.refused = append(res.refused, me)
			continue
		}
		if err != nil {
			require.Nil(t, m)
			res.err = err
			// The error is sticky.
			_, again := r.Next()
			require.Equal(t, err, again)
			return res
		}
		require.NotNil(t, m)
		res.msgs = append(res.msgs, m)
	}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// handWritten is a Lastgang in the shape real files have: UNA with a
// decimal comma, local offsets, a DTM+293 version in SG6, an Ersatzwert with
// its STS.
const handWritten = `UNA:+,? '
UNB+UNOC:3+9910125000002:500+9904768000008:500+250301:0800+IC1++TL'
UNH+M1+MSCONS:D:04B:UN:2.4c'
BGM+7+DOC1+9'
DTM+137:202503010800?+01:303'
RFF+Z13:13025'
NAD+MS+9910125000002::293'
NAD+MR+9904768000008::293'
UNS+D'
NAD+DP'
LOC+172+41373559241'
DTM+293:20250301070000?+00:304'
LIN+1'
PIA+5+1-1?:1.29.0:SRW'
QTY+220:1,662:KWH'
DTM+163:202503010000?+01:303'
DTM+164:202503010015?+01:303'
QTY+67:0,5'
DTM+163:202503010015?+01:303'
DTM+164:202503010030?+01:303'
STS+Z32++Z92'
UNT+20+M1'
UNZ+1+IC1'
`

func TestReadHandWritten(t *testing.T) {
	res := readAll(t, strings.NewReader(handWritten), opts())
	require.NoError(t, res.err)
	require.Empty(t, res.refused)
	require.Len(t, res.msgs, 1)
	m := res.msgs[0]
	require.Equal(t, "IC1", m.Interchange)
	require.Equal(t, "M1", m.Ref)
	require.Equal(t, "DOC1", m.Document)
	require.Equal(t, "7", m.DocumentType)
	require.Equal(t, utc("2025-03-01T07:00:00Z"), m.DocumentDate)
	require.Equal(t, "13025", m.Pruefidentifikator)
	require.Equal(t, "9910125000002", m.Sender.String())
	require.Equal(t, "9904768000008", m.Receiver)
	require.Equal(t, mscons.KindInterval, m.Kind)
	require.Equal(t, 1, m.Parts)
	require.Len(t, m.Deliveries, 1)

	d := m.Deliveries[0]
	require.NoError(t, d.Validate())
	require.Equal(t, "41373559241", d.MaloID.String())
	require.True(t, d.MeloID.IsZero())
	require.Equal(t, "1-1:1.29.0", d.Obis.String())
	require.Equal(t, metering.SparteStrom, d.Sparte)
	require.Equal(t, metering.UnitKWh, d.Unit)
	require.Equal(t, "9910125000002:2025-03", d.Scope.String())
	require.Equal(t, "20250301070000", d.Version.String())
	require.Equal(t, testNow, d.RecordedAt)
	sender, ref, ok := d.Source.Mscons()
	require.True(t, ok)
	require.Equal(t, "9910125000002", sender.String())
	require.Equal(t, "DOC1", ref)
	require.Equal(t, []metering.Interval{
		{From: utc("2025-02-28T23:00:00Z"), To: utc("2025-02-28T23:15:00Z"), Value: dec("1.662"), Quality: metering.QualityMeasured},
		{From: utc("2025-02-28T23:15:00Z"), To: utc("2025-02-28T23:30:00Z"), Value: dec("0.5"), Quality: metering.QualitySubstituted},
	}, d.Intervals)
	require.Len(t, d.Provenance, 2)
	require.Equal(t, "INGESTED", d.Provenance[0].EventType)
	require.Equal(t, testNow, d.Provenance[0].OccurredAt)
	require.Equal(t, "MSCONS_STATUS", d.Provenance[1].EventType)
	require.Contains(t, *d.Provenance[1].Note, "Z32=Z92 on 1 values")
}

func TestNewReaderNeedsNow(t *testing.T) {
	_, err := mscons.NewReader(strings.NewReader(handWritten), mscons.Options{}).Next()
	require.ErrorContains(t, err, "Options.Now is required")
}

func TestWriteReadRoundTrip(t *testing.T) {
	op := must(metering.ParseBdewCode("9910125000002"))
	malo := must(metering.ParseMaloID("41373559241"))
	obis := must(metering.ParseObis("1-1:1.29.0"))
	from := utc("2025-02-28T23:00:00Z")
	var ivs []metering.Interval
	for i := range 4 {
		f := from.Add(time.Duration(i) * 15 * time.Minute)
		ivs = append(ivs, metering.Interval{From: f, To: f.Add(15 * time.Minute), Value: dec("-12.000125").Add(decimal.NewFromInt(int64(i))), Quality: metering.QualityMeasured})
	}
	d := metering.Delivery{MaloID: malo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh, Intervals: ivs,
		Source: must(metering.SourceMscons(op, "Zählerstände?+'1")), Scope: metering.ScopeFor(op, from, metering.SparteStrom),
		Version: must(metering.ParseVersion("20250301000001")), RecordedAt: testNow}
	for _, comma := range []bool{false, true} {
		var buf bytes.Buffer
		require.NoError(t, mscons.Write(&buf, []metering.Delivery{d}, mscons.WriteOptions{DecimalComma: comma, LineBreaks: comma}))
		res := readAll(t, &buf, opts())
		require.NoError(t, res.err)
		require.Empty(t, res.refused)
		require.Len(t, res.msgs, 1)
		got := res.msgs[0].Deliveries
		require.Len(t, got, 1)
		require.Equal(t, d.Intervals, got[0].Intervals)
		require.Equal(t, d.Scope, got[0].Scope)
		require.Equal(t, d.Version, got[0].Version)
		require.Equal(t, d.Source, got[0].Source)
	}
}
