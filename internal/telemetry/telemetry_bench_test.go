package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/meterstore/meterstore/internal/promexport"
	"github.com/meterstore/meterstore/internal/telemetry"
)

// BenchmarkRecord is the cost each statement and each write call pays for its
// metrics, into the no-op (no SDK) and into the SDK with the Prometheus
// exporter: what instrumentation adds to the write and query paths.
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	stmt := telemetry.Statement{Surface: telemetry.PGWire, Outcome: telemetry.OK, Duration: 3 * time.Millisecond, Rows: 96,
		Tiers: "cold+hot", Mode: "unified", ColdFiles: 12, ResolvedFiles: 2}
	write := telemetry.Write{Table: "readings", Outcome: telemetry.OK, Duration: 40 * time.Millisecond,
		Rows: telemetry.Effects{Hot: [5]int64{0, 19000, 600, 300, 100}, Cold: [5]int64{0, 0, 20}}}
	run := func(b *testing.B) {
		b.Run("statement", func(b *testing.B) {
			for range b.N {
				telemetry.RecordStatement(ctx, stmt)
			}
		})
		b.Run("write", func(b *testing.B) {
			for range b.N {
				telemetry.RecordWrite(ctx, write)
			}
		})
	}
	b.Run("noop", run)
	exp, err := promexport.New("benchmark")
	if err != nil {
		b.Fatal(err)
	}
	defer exp.Close(ctx)
	b.Run("sdk", run)
}
