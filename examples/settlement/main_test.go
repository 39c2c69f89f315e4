package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/embedded"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// October 2025 in the demo portfolio's range; its last Sunday is the DST change.
const month, tenant = "2025-10", "tenant01"

// TestReportMatchesTheOracle: the report of a deployment named by DSN and
// warehouse, its month split across Iceberg (archived, with late corrections
// below the watermark) and PostgreSQL, has per MaLo and channel the resolved
// sums of testkit's oracle for that tenant and balancing month, prints its
// provenance, and its Parquet file carries the same figures and the provenance.
func TestReportMatchesTheOracle(t *testing.T) {
	w := testkit.Demo(0xDE30, 16, 42, 0, 0.05)
	b, err := w.Generate()
	require.NoError(t, err)
	s := storetest.Start(t, storetest.Options{Now: b.Days[0].Time()}, table())
	oracle := load(t, s.Store, b, time.Date(2025, 10, 20, 0, 0, 0, 0, time.UTC))

	out := filepath.Join(t.TempDir(), "october.parquet")
	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-dsn", s.DSN, "-warehouse", s.Warehouse,
		"-month", month, "-tenant", tenant, "-out", out}, &stdout))
	t.Log(stdout.String())
	require.Contains(t, stdout.String(), "tiers cold+hot", "the month spans both tiers")
	check(t, oracle, out, stdout.String())
}

// TestReportOpensTheEmbeddedDefault: with no DSN the job opens the embedded
// default under -home, starting its PostgreSQL, and reports what it holds.
func TestReportOpensTheEmbeddedDefault(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	w := testkit.Demo(0xE4, 4, 40, 0, 0.05)
	b, err := w.Generate()
	require.NoError(t, err)

	d, err := embedded.Open(ctx, embedded.Options{Home: home, Throwaway: true})
	require.NoError(t, err)
	st, closeStore, err := openStore(ctx, d.DSN, d.Warehouse)
	require.NoError(t, err)
	oracle := load(t, st, b, time.Date(2025, 10, 10, 0, 0, 0, 0, time.UTC))
	closeStore()
	require.NoError(t, d.Close())
	_, err = embedded.Find(home)
	require.ErrorIs(t, err, embedded.ErrNotRunning)

	out := filepath.Join(t.TempDir(), "october.parquet")
	var stdout bytes.Buffer
	require.NoError(t, run(ctx, []string{"-home", home, "-month", month, "-tenant", tenant, "-out", out}, &stdout))
	t.Log(stdout.String())
	check(t, oracle, out, stdout.String())
	_, err = embedded.Find(home)
	require.ErrorIs(t, err, embedded.ErrNotRunning, "the job left the cluster it started running")
}

// load appends the workload's deliveries through the store in arrival order,
// archiving everything before cut once the originals are in (so the later
// corrections of archived days go to Iceberg), and returns the oracle of the same.
func load(t *testing.T, st *store.Store, b testkit.Batch, cut time.Time) *testkit.Oracle {
	t.Helper()
	ctx := context.Background()
	oracle := testkit.NewOracle(table())
	var originals, corrections []meterstore.StoredSeries
	for _, d := range b.Deliveries {
		if d.Kind == testkit.Correction {
			corrections = append(corrections, d.Series)
		} else {
			originals = append(originals, d.Series)
		}
	}
	_, err := st.Append(ctx, originals...)
	require.NoError(t, err)
	tbl, ok := st.Table(table().Name())
	require.True(t, ok)
	_, err = tbl.Archive(ctx, cut.Add(table().SettlementLag()), 0)
	require.NoError(t, err)
	out, err := st.Append(ctx, corrections...)
	require.NoError(t, err)
	require.True(t, out.HadLateCorrections(), "no correction went below the watermark")
	_, err = oracle.RecordSeries(append(originals, corrections...)...)
	require.NoError(t, err)
	return oracle
}

// check compares the Parquet file with the oracle's resolved sums per MaLo
// and channel of the tenant's balancing month, and its key-value metadata
// with the provenance the job printed.
func check(t *testing.T, oracle *testkit.Oracle, path, stdout string) {
	t.Helper()
	want := map[string]decimal.Decimal{}
	for k, v := range oracle.SumBy(time.Time{}, time.Time{}, func(r meterstore.Row) string {
		sp, err := metering.ParseSparte(r.Sparte)
		require.NoError(t, err)
		bm := metering.BalancingMonth(r.From, sp)
		return fmt.Sprintf("%s|%04d-%02d|%s %s", *r.Extra[0], bm.Year, int(bm.Month), r.MaloID, r.ObisCode)
	}) {
		if k, ok := strings.CutPrefix(k, tenant+"|"+month+"|"); ok {
			want[k] = v
		}
	}
	require.NotEmpty(t, want)

	rdr, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer rdr.Close()
	kv := rdr.MetaData().KeyValueMetadata()
	for _, k := range []string{"meterstore.watermark", "meterstore.tiers", "meterstore.query", "meterstore.parameters"} {
		require.NotNil(t, kv.FindValue(k), "key-value metadata %s", k)
	}
	wm, err := time.Parse(time.RFC3339Nano, *kv.FindValue("meterstore.watermark"))
	require.NoError(t, err)
	require.Contains(t, stdout, "provenance: watermark "+wm.UTC().Format(time.RFC3339))
	require.Contains(t, *kv.FindValue("meterstore.parameters"), `"`+tenant+`"`)

	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()
	got := map[string]decimal.Decimal{}
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		malo, obis := column(rec, "malo_id").(*array.String), column(rec, "obis_code").(*array.String)
		energy := column(rec, "energy").(*array.Decimal128)
		scale := -energy.DataType().(*arrow.Decimal128Type).Scale
		for i := 0; i < int(rec.NumRows()); i++ {
			got[malo.Value(i)+" "+obis.Value(i)] = decimal.NewFromBigInt(energy.Value(i).BigInt(), scale)
		}
	}
	require.Equal(t, len(want), len(got), "MaLo × channel rows")
	for k, v := range want {
		require.True(t, v.Equal(got[k]), "%s: report %s, oracle %s", k, got[k], v)
	}
	require.Contains(t, stdout, fmt.Sprintf("%d rows", len(want)))
}
