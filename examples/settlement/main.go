// Command settlement is a monthly settlement report, written as a reporting
// job outside MeterStore would be: it imports the module, opens a deployment,
// asks one resolved question with bound parameters — the energy per MaLo and
// OBIS channel of one balancing month for one tenant — prints the boundary
// the answer was computed against, and writes the answer to Parquet with that
// boundary in the file's key-value metadata, so the file says which data it
// summed.
//
//	settlement -month 2025-10 -tenant tenant01 -out october.parquet
//
// Without -dsn and -warehouse (or MSQL_DSN and MSQL_WAREHOUSE) it opens the
// embedded default under $MSQL_HOME — what `msql demo` loads — starting its
// PostgreSQL for the run if msql is not running it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/embedded"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "settlement:", err)
		os.Exit(1)
	}
}

// reportSQL is the report: resolved readings (readings is resolution applied),
// grouped by the balancing month of each row's Sparte (gas months start at
// 06:00 local time). The "from" range is one day wider than the month on
// either side, so the planner can prune files and partitions; the balancing
// month decides which rows count.
const reportSQL = `SELECT malo_id, obis_code, unit,
       meter_balancing_month("from", sparte) AS balancing_month,
       sum(value) AS energy,
       count(*) AS intervals
FROM readings
WHERE tenant = $1
  AND "from" >= $2 AND "from" < $3
  AND meter_balancing_month("from", sparte) = $4::DATE
GROUP BY ALL
ORDER BY malo_id, obis_code`

// table is the deployment's table declaration: the embedded default's
// (intervals, one identity column tenant). A deployment's job declares its own.
func table() meterstore.TableConfig { return embedded.Table() }

type options struct {
	month, tenant, out   string
	dsn, warehouse, home string
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("settlement", flag.ContinueOnError)
	fs.StringVar(&o.month, "month", "", "balancing month, YYYY-MM (required)")
	fs.StringVar(&o.tenant, "tenant", "", "tenant (required)")
	fs.StringVar(&o.out, "out", "", "Parquet file to write (default settlement-<month>-<tenant>.parquet)")
	fs.StringVar(&o.dsn, "dsn", os.Getenv("MSQL_DSN"), "PostgreSQL of a deployment (default $MSQL_DSN); with -warehouse")
	fs.StringVar(&o.warehouse, "warehouse", os.Getenv("MSQL_WAREHOUSE"), "Iceberg warehouse URI of a deployment (default $MSQL_WAREHOUSE); with -dsn")
	fs.StringVar(&o.home, "home", "", "the embedded default's directory when no -dsn is given (default $MSQL_HOME)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	month, err := time.Parse("2006-01", o.month)
	if err != nil {
		return fmt.Errorf("-month %q: want YYYY-MM, e.g. 2025-10", o.month)
	}
	if o.tenant == "" {
		return errors.New("-tenant is required, e.g. -tenant tenant01")
	}
	if o.out == "" {
		o.out = fmt.Sprintf("settlement-%s-%s.parquet", o.month, o.tenant)
	}
	if (o.dsn == "") != (o.warehouse == "") {
		return errors.New("-dsn and -warehouse go together (or neither, for the embedded default)")
	}

	if o.dsn == "" {
		d, err := embedded.Open(ctx, embedded.Options{Home: o.home, Log: os.Stderr})
		if err != nil {
			return err
		}
		defer d.Close()
		o.dsn, o.warehouse = d.DSN, d.Warehouse
	}
	st, closeStore, err := openStore(ctx, o.dsn, o.warehouse)
	if err != nil {
		return err
	}
	defer closeStore()

	params := []any{o.tenant, month.AddDate(0, 0, -1), month.AddDate(0, 1, 1), month.Format("2006-01-02")}
	// A stream whose hot half an archival moved under reports
	// ErrBoundaryMoved at its end; the file, written aside, is then discarded
	// and written again from a fresh plan (engine.Rerun's policy).
	var rep report
	err = engine.Rerun(ctx, func() (err error) {
		rep, err = writeReport(ctx, st.Engine(), o.out, params)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "settlement %s, %s: %d rows (MaLo × channel) written to %s\n", o.month, o.tenant, rep.rows, o.out)
	for _, u := range rep.units {
		fmt.Fprintf(stdout, "  total %s %s\n", rep.totals[u], u)
	}
	fmt.Fprintf(stdout, "provenance: %s\n", rep.provenance)
	return nil
}

// openStore opens the deployment's store: both tiers of the table and the engine.
func openStore(ctx context.Context, dsn, warehouse string) (*store.Store, func(), error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	cat, err := catalog.Open(ctx, catalog.Options{DSN: dsn, Warehouse: warehouse, Pool: pool})
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("open the Iceberg catalog: %w", err)
	}
	st, err := store.Open(ctx, store.Config{Pool: pool, Catalog: cat, Tables: []meterstore.TableConfig{table()}})
	if err != nil {
		cat.Close()
		pool.Close()
		return nil, nil, err
	}
	return st, func() { st.Close(); cat.Close(); pool.Close() }, nil
}

type report struct {
	rows       int64
	units      []string
	totals     map[string]decimal.Decimal
	provenance string
}

// writeReport streams the report into out (through a temporary file renamed
// into place once the stream ended cleanly). The Arrow schema the engine
// hands over carries the provenance (meterstore.watermark, meterstore.tiers,
// …) in its metadata, which the Parquet writer keeps as key-value metadata;
// the statement and its parameters go beside it.
func writeReport(ctx context.Context, eng *engine.Engine, out string, params []any) (report, error) {
	rep := report{totals: map[string]decimal.Decimal{}}
	s, err := eng.Stream(ctx, reportSQL, params...)
	if err != nil {
		return rep, err
	}
	defer s.Close()
	rep.provenance = s.Provenance().String()

	tmp, err := os.CreateTemp(filepath.Dir(out), ".settlement-*.parquet")
	if err != nil {
		return rep, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	w, err := pqarrow.NewFileWriter(s.Schema, tmp, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		tmp.Close()
		return rep, err
	}
	for s.Next() {
		rec := s.Record()
		if err := w.Write(rec); err != nil {
			w.Close()
			return rep, err
		}
		rep.add(rec)
	}
	if err := s.Err(); err != nil {
		w.Close()
		return rep, err
	}
	paramsJSON, err := json.Marshal(params)
	if err != nil {
		w.Close()
		return rep, err
	}
	for k, v := range map[string]string{"meterstore.query": reportSQL, "meterstore.parameters": string(paramsJSON)} {
		if err := w.AppendKeyValueMetadata(k, v); err != nil {
			w.Close()
			return rep, err
		}
	}
	if err := w.Close(); err != nil { // closes tmp too
		return rep, err
	}
	return rep, os.Rename(tmp.Name(), out)
}

// add counts a batch's rows and adds its energy to the totals per unit.
func (r *report) add(rec arrow.RecordBatch) {
	unitCol, energyCol := column(rec, "unit"), column(rec, "energy")
	units := unitCol.(*array.String)
	energy := energyCol.(*array.Decimal128)
	scale := -energy.DataType().(*arrow.Decimal128Type).Scale
	for i := 0; i < int(rec.NumRows()); i++ {
		u := units.Value(i)
		if _, ok := r.totals[u]; !ok {
			r.units = append(r.units, u)
		}
		r.totals[u] = r.totals[u].Add(decimal.NewFromBigInt(energy.Value(i).BigInt(), scale))
	}
	r.rows += rec.NumRows()
}

func column(rec arrow.RecordBatch, name string) arrow.Array {
	return rec.Column(rec.Schema().FieldIndices(name)[0])
}
