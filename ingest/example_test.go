package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// exampleTB lets the Example borrow the throwaway PostgreSQL the tests use.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Helper()                           {}
func (e *exampleTB) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// Example imports a CSV export (a tenant set for every row) into a store,
// queries it, and imports it again: nothing changes, and the report says so.
func Example() {
	ctx := context.Background()
	tb := &exampleTB{}
	defer func() {
		for i := len(tb.cleanups) - 1; i >= 0; i-- {
			tb.cleanups[i]()
		}
	}()
	dsn := pgtest.Database(tb)
	pool, err := pgxpool.New(ctx, dsn)
	must(err)
	defer pool.Close()
	dir, err := os.MkdirTemp("", "meterstore-example")
	must(err)
	defer os.RemoveAll(dir)
	cat, err := catalog.Open(ctx, catalog.Options{DSN: dsn, Warehouse: "file://" + dir, Pool: pool})
	must(err)
	defer cat.Close()
	cfg := meterstore.TableSpec{Name: "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}}.MustBuild()
	st, err := store.Open(ctx, store.Config{Pool: pool, Catalog: cat, Tables: []meterstore.TableConfig{cfg},
		Now: func() time.Time { return time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC) }})
	must(err)
	defer st.Close()

	csv := filepath.Join(dir, "export.csv")
	must(os.WriteFile(csv, []byte(`malo_id,obis_code,sparte,from,to,value,unit,quality,version,operator
41373559241,1-0:1.29.0,STROM,2026-03-18T00:00:00+01:00,2026-03-18T00:15:00+01:00,0.1,KWH,MEASURED,20260319000001,9910125000002
41373559241,1-0:1.29.0,STROM,2026-03-18T00:15:00+01:00,2026-03-18T00:30:00+01:00,0.2,KWH,MEASURED,20260319000001,9910125000002
`), 0o644))
	opt := ingest.Options{Set: map[string]string{"tenant": "t1"}}
	rep, err := ingest.Files(ctx, st, opt, csv)
	must(err)
	fmt.Println(rep.Rows, "rows,", rep.HotRows, "hot,", rep.Inserted, "inserted, ok:", rep.OK())

	res, err := st.Query(ctx, `SELECT tenant, sum(value) FROM readings GROUP BY tenant`)
	must(err)
	fmt.Println(res.Rows[0][0], res.Rows[0][1])

	rep, err = ingest.Files(ctx, st, opt, csv)
	must(err)
	fmt.Println(rep.Duplicate, "duplicates, changed:", rep.Changed())
	// Output:
	// 2 rows, 2 hot, 2 inserted, ok: true
	// t1 0.3
	// 2 duplicates, changed: false
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
