package mscons_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

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
