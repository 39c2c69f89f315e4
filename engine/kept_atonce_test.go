package engine_test

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/testkit"
)

// TestKeptStatementOfOnePlanAtOnce: runs of one plan at once in one scope
// take turns with its kept statements — a run that prepared one gives it
// back as it ends, and another takes it — and each answers in full: a run
// that ends never takes away what the run now holding its statement reads
// through it. Each round is a plan of its own (another bound), whose first
// runs prepare at once.
func TestKeptStatementOfOnePlanAtOnce(t *testing.T) {
	// More threads than cores: a run may be stopped anywhere, also between
	// giving its statement back and ending its scans.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	w := testkit.NewWorkload(0x3F)
	w.MaLos, w.Tenants = 4, 2
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	const rounds, runners, runs = 16, 16, 4
	errs := make(chan error, rounds*runners*runs)
	for round := range rounds {
		lo := a.batch.Days[0].Time().Add(time.Duration(round) * 15 * time.Minute)
		want := tenantAnswer(t, eng, "tenant01", lo)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range runners {
			wg.Go(func() {
				<-start
				for range runs {
					res, err := scopedAnswer(eng, "tenant01", lo)
					switch {
					case err != nil:
						errs <- fmt.Errorf("round %d: %w", round, err)
					case !reflect.DeepEqual(res.Rows, want):
						errs <- fmt.Errorf("round %d: answered %v at once with runs of its plan, want %v", round, res.Rows, want)
					}
				}
			})
		}
		close(start)
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
