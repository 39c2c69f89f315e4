package store_test

import (
	"os"

	"github.com/meterstore/meterstore/internal/promexport"
)

// MSQL_BENCH_SDK=1 installs the metric SDK with the Prometheus exporter for
// the benchmarks (for the life of the test binary), so they measure recording
// into it rather than into the no-op.
func init() {
	if os.Getenv("MSQL_BENCH_SDK") == "" {
		return
	}
	if _, err := promexport.New("store benchmark"); err != nil {
		panic(err)
	}
}
