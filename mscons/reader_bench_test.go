package mscons_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/meterstore/meterstore/mscons"
)

// BenchmarkReader reads one-day Lastgang messages (96 quarter hours at
// local offsets, decimal comma, line breaks); bytes/s and values/s are
// reported.
func BenchmarkReader(b *testing.B) {
	from, _ := localDay(2025, time.March, 3, 0)
	text := interchange{s: commaSeps, nl: true, msgs: []gmsg{{values: series(from, 15*time.Minute, 96, "KWH", true)}}}.render()
	unh, unz := strings.Index(text, "UNH+"), strings.Index(text, "UNZ+")
	const n = 200
	src := &repeated{head: []byte(text[:unh]), body: []byte(text[unh:unz]), tail: []byte(fmt.Sprintf("UNZ+%d+IC1'\n", n)), n: n}
	size := int64(unh) + int64(n)*int64(unz-unh) + int64(len(src.tail))
	b.SetBytes(size)
	b.ReportAllocs()
	values := 0
	for b.Loop() {
		*src = repeated{head: src.head, body: src.body, tail: src.tail, n: n}
		r := mscons.NewReader(src, opts())
		for {
			m, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			values += len(m.Deliveries[0].Intervals)
		}
	}
	b.ReportMetric(float64(values)/b.Elapsed().Seconds(), "values/s")
}
