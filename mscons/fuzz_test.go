package mscons_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
)

// FuzzReader: on any input the reader neither panics nor loops, holds no
// more than its limits allow, ends with io.EOF or a *SyntaxError, refuses
// with *MessageError only, and every message it returns holds deliveries
// that pass Validate.
func FuzzReader(f *testing.F) {
	at := time.Date(2025, 3, 30, 0, 0, 0, 0, time.UTC)
	f.Add([]byte(handWritten))
	f.Add([]byte(interchange{s: oddSeps, nl: true, msgs: []gmsg{{values: series(at, 15*time.Minute, 8, "KWH", true)}}}.render()))
	f.Add([]byte(interchange{msgs: []gmsg{{pid: "13017", obis: "1-1:1.8.0", values: []gval{{qual: "67", value: "12.5", at: at}}}}}.render()))
	f.Add([]byte(interchange{msgs: []gmsg{
		{access: "S", seq: "1:C", values: series(at, time.Hour, 2, "", false)},
		{access: "S", seq: "2:F", bare: true, values: series(at.Add(2*time.Hour), time.Hour, 2, "", false)},
	}}.render()))
	for _, name := range []string{"mscons-restify/mscons-message-example.txt", "mscons-restify/mscons-message-example-una-spec.txt"} {
		b, err := os.ReadFile("../testdata/mscons/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o := opts()
		o.MaxSegmentBytes = 1 << 10
		o.MaxMessageSegments = 1 << 12
		r := mscons.NewReader(bytes.NewReader(data), o)
		// A segment has at least one byte, and every other call consumes
		// at least one (a refused split message leaves the segment that
		// ended it for the next call).
		for i := 0; i <= 2*len(data)+2; i++ {
			m, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			var me *mscons.MessageError
			if errors.As(err, &me) {
				if m != nil || me.Error() == "" {
					t.Fatalf("refusal with a message or without text: %v", err)
				}
				continue
			}
			if err != nil {
				if !errors.Is(err, mscons.ErrSyntax) {
					t.Fatalf("error neither refusal nor syntax: %v", err)
				}
				if _, again := r.Next(); again != err {
					t.Fatalf("error not sticky: %v then %v", err, again)
				}
				return
			}
			for _, d := range m.Deliveries {
				if err := d.Validate(); err != nil {
					t.Fatalf("delivered an invalid delivery: %v", err)
				}
			}
		}
		t.Fatalf("reader did not finish %d bytes", len(data))
	})
}

// FuzzWriteRead: a delivery with any value decimal(18,6) holds, any
// document number ISO 8859-1 can carry, at any quarter hour, written with
// either decimal mark, reads back the same.
func FuzzWriteRead(f *testing.F) {
	f.Add(int64(1662), uint8(3), "DOC-1", uint32(0), uint8(4), false)
	f.Add(int64(-999999999999999999), uint8(6), "Zähler?+:'", uint32(86_000), uint8(7), true)
	op, _ := metering.ParseBdewCode("9910125000002")
	malo, _ := metering.ParseMaloID("41373559241")
	obis, _ := metering.ParseObis("1-0:1.29.0")
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, mant int64, scale uint8, doc string, start uint32, steps uint8, comma bool) {
		v := decimal.New(mant, -int32(scale%7))
		from := base.Add(time.Duration(start%200_000) * 15 * time.Minute)
		src, err := metering.SourceMscons(op, doc)
		if err != nil || !utf8.ValidString(doc) {
			return
		}
		d := metering.Delivery{MaloID: malo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh,
			Source: src, Scope: metering.ScopeFor(op, from, metering.SparteStrom), RecordedAt: testNow}
		d.Version, _ = metering.ParseVersion("20250301000001")
		for i := range int(steps%8) + 1 {
			f := from.Add(time.Duration(i) * 15 * time.Minute)
			iv, err := metering.NewInterval(f, f.Add(15*time.Minute), v.Add(decimal.NewFromInt(int64(i))), metering.QualityMeasured)
			if err != nil {
				return // not decimal(18,6)
			}
			d.Intervals = append(d.Intervals, iv)
		}
		if d.Validate() != nil {
			return // across a month: two scopes
		}
		var buf bytes.Buffer
		err = mscons.Write(&buf, []metering.Delivery{d}, mscons.WriteOptions{DecimalComma: comma})
		if strings.ContainsFunc(doc, func(r rune) bool { return r > 0xff }) {
			if err == nil {
				t.Fatalf("document %q outside ISO 8859-1 written", doc)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		r := mscons.NewReader(&buf, opts())
		m, err := r.Next()
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		if _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the message: %v", err)
		}
		got := m.Deliveries[0]
		if _, ref, _ := got.Source.Mscons(); ref != doc || len(got.Intervals) != len(d.Intervals) {
			t.Fatalf("document %q read as %q, %d intervals as %d", doc, ref, len(d.Intervals), len(got.Intervals))
		}
		for i, iv := range d.Intervals {
			g := got.Intervals[i]
			if !g.Value.Equal(iv.Value) || !g.From.Equal(iv.From) || !g.To.Equal(iv.To) {
				t.Fatalf("interval %d: wrote %v, read %v", i, iv, g)
			}
		}
	})
}
