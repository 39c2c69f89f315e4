package storetest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// A deployment's test package stops the throwaway PostgreSQL cluster with its
// tests: func TestMain(m *testing.M) { pgtest.Main(m) }.
func TestMain(m *testing.M) { pgtest.Main(m) }

// Example is what a deployment's test does, in a TestXxx(t *testing.T) with
// t in place of tb: start a throwaway store for its own table declaration,
// feed it the seeded workload, archive part of it, and check what the store
// answers against the oracle's independent fold.
func Example() {
	tb := newExampleTB()
	defer tb.cleanup()
	ctx := context.Background()

	// The deployment's own table declaration; the workload fills its tenant column.
	cfg := meterstore.TableSpec{
		Name:    "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}},
	}.MustBuild()
	w := testkit.NewWorkload(0x5EED)
	w.MaLos, w.Tenants, w.CorrectionRate = 6, 2, 0.05
	batch, err := w.Generate()
	must(err)

	s := storetest.Start(tb, storetest.Options{Now: batch.Days[0].Time()}, cfg)
	oracle := testkit.NewOracle(cfg)
	for _, d := range batch.Deliveries {
		_, err := s.Store.Append(ctx, d.Series)
		must(err)
		_, err = oracle.RecordDeliveries(d)
		must(err)
	}
	settled := batch.Days[3].Time()
	_, err = s.Table().Archiver.Archive(ctx, settled.Add(cfg.SettlementLag()), 0)
	must(err)

	res, err := s.Store.Query(ctx, `SELECT count(*), sum(value) FROM readings`)
	must(err)
	all := time.Time{}
	fmt.Println("tiers:", res.Provenance.Tiers)
	fmt.Println("rows as the oracle:", res.Rows[0][0] == int64(oracle.RowCount(all, all)))
	fmt.Println("sum as the oracle:", res.Rows[0][1].(decimal.Decimal).Equal(oracle.Sum(all, all)))
	// Output:
	// tiers: cold+hot
	// rows as the oracle: true
	// sum as the oracle: true
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// exampleTB stands in for the *testing.T a deployment's test has: an Example
// gets none.
type exampleTB struct {
	testing.TB
	dir      string
	cleanups []func()
}

func newExampleTB() *exampleTB {
	dir, err := os.MkdirTemp("", "storetest-example-")
	must(err)
	return &exampleTB{dir: dir}
}

func (e *exampleTB) Helper()                           {}
func (e *exampleTB) TempDir() string                   { d, _ := os.MkdirTemp(e.dir, ""); return d }
func (e *exampleTB) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleTB) FailNow()                          { panic("FailNow") }

func (e *exampleTB) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	os.RemoveAll(e.dir)
}
