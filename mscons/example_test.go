package mscons_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
)

// Example reads an interchange of two messages: a quarter hour of a
// Lastgang with a decimal comma and local offsets, and a message whose MaLo
// has a transposed digit, which is refused while the reader goes on.
func Example() {
	const interchange = `UNA:+,? '
UNB+UNOC:3+9910125000002:500+9904768000008:500+251026:0800+IC7++TL'
UNH+1+MSCONS:D:04B:UN:2.4c'
BGM+7+LG-1+9'
DTM+137:202510260800?+01:303'
RFF+Z13:13025'
NAD+MS+9910125000002::293'
UNS+D'
NAD+DP'
LOC+172+41373559241'
DTM+293:20251026070000?+00:304'
LIN+1'
PIA+5+1-1?:1.29.0:SRW'
QTY+220:1,662:KWH'
DTM+163:202510260245?+02:303'
DTM+164:202510260200?+01:303'
UNT+15+1'
UNH+2+MSCONS:D:04B:UN:2.4c'
BGM+7+LG-2+9'
DTM+137:202510260800?+01:303'
RFF+Z13:13025'
NAD+MS+9910125000002::293'
UNS+D'
NAD+DP'
LOC+172+41373559214'
UNT+9+2'
UNZ+2+IC7'
`
	recorded := time.Date(2025, 10, 26, 9, 0, 0, 0, time.UTC)
	r := mscons.NewReader(strings.NewReader(interchange), mscons.Options{Now: func() time.Time { return recorded }})
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var me *mscons.MessageError
		if errors.As(err, &me) {
			fmt.Printf("refused: message %s, segment %d %s: %s\n", me.Ref, me.Ordinal, me.Tag, me.Rule)
			continue
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, d := range m.Deliveries {
			fmt.Println(m.Pruefidentifikator, d.MaloID, d.Obis, d.Sparte, d.Unit, d.Resolution, d.Scope, d.Version)
			for _, iv := range d.Intervals {
				fmt.Println(" ", iv.From.Format(time.RFC3339), iv.To.Format(time.RFC3339), iv.Value, iv.Quality)
			}
		}
	}
	// Output:
	// 13025 41373559241 1-1:1.29.0 STROM KWH PT15M 9910125000002:2025-10 20251026070000
	//   2025-10-26T00:45:00Z 2025-10-26T01:00:00Z 1.662 MEASURED
	// refused: message 2, segment 8 LOC: LOC+172 is not a valid Marktlokations-ID
}

// ExampleWrite writes a delivery as MSCONS, the way tests and benchmarks
// generate input for an import.
func ExampleWrite() {
	op, _ := metering.ParseBdewCode("9910125000002")
	malo, _ := metering.ParseMaloID("41373559241")
	obis, _ := metering.ParseObis("1-0:1.29.0")
	from := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	src, _ := metering.SourceMscons(op, "DOC-1")
	version, _ := metering.ParseVersion("20250302060000")
	d := metering.Delivery{MaloID: malo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh,
		Intervals: []metering.Interval{{From: from, To: from.Add(15 * time.Minute), Value: decimal.RequireFromString("0.25"), Quality: metering.QualityMeasured}},
		Source:    src, Scope: metering.ScopeFor(op, from, metering.SparteStrom), Version: version, RecordedAt: from}
	var buf bytes.Buffer
	if err := mscons.Write(&buf, []metering.Delivery{d}, mscons.WriteOptions{Interchange: "IC1", LineBreaks: true}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(buf.String())
	// Output:
	// UNA:+.? '
	// UNB+UNOC:3+9910125000002:500+9910125000002:500+250301:0000+IC1++TL'
	// UNH+1+MSCONS:D:04B:UN:2.4c'
	// BGM+7+DOC-1+9'
	// DTM+137:202503020600?+00:303'
	// RFF+Z13:13025'
	// NAD+MS+9910125000002::293'
	// NAD+MR+9910125000002::293'
	// UNS+D'
	// NAD+DP'
	// LOC+172+41373559241'
	// DTM+293:20250302060000?+00:304'
	// LIN+1'
	// PIA+5+1-0?:1.29.0:SRW'
	// QTY+220:0.25:KWH'
	// DTM+163:202503010000?+00:303'
	// DTM+164:202503010015?+00:303'
	// UNT+16+1'
	// UNZ+1+IC1'
}
