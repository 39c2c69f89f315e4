package main

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/embedded"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestVerifyReportsAForeignUnitPair: a file another writer committed to the
// cold tier with electricity in m³ — which the hot tier's CHECK and every
// cold write path of the store refuse — is reported by msql verify, naming
// the table and the pair, and verify exits 3.
func TestVerifyReportsAForeignUnitPair(t *testing.T) {
	dep := demoWithForeignFile(t, "foreign-m3.parquet", `* REPLACE ('M3' AS unit)`, `sparte = 'STROM' LIMIT 4`)
	r := msql(t, "", append([]string{"verify"}, dep...)...)
	require.Equal(t, 3, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "readings_versions: 4 rows in the cold tier carry sparte STROM in unit M3")
	require.Contains(t, r.stderr, "rows in a unit their sparte cannot have")
}

// TestVerifyReportsAForeignBalancingDay: a file committed around the store
// whose balancing_day is not the day metering computes from its "from" and
// sparte is reported by msql verify, which exits 3 — the planner answers
// meter_balancing_day from the stored column of every file that holds it, so
// such a file's rows group under the writer's day, not the calendar's.
func TestVerifyReportsAForeignBalancingDay(t *testing.T) {
	dep := demoWithForeignFile(t, "foreign-day.parquet", `* REPLACE (balancing_day + 5 AS balancing_day, version + 1 AS version)`, `true LIMIT 3`)
	r := msql(t, "", append([]string{"verify"}, dep...)...)
	require.Equal(t, 3, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "readings_versions: 3 rows carry a balancing_day that is not the day their \"from\" and sparte give")
	require.Contains(t, r.stderr, "rows whose balancing_day is not their day")
}

// demoWithForeignFile is a tiny demo deployment's flags, its cold table
// holding one more file, name, committed around the store: the rows of an
// archived file WHERE where, with sel applied, beside it.
func demoWithForeignFile(t *testing.T, name, sel, where string) []string {
	t.Helper()
	dep := tinyDemo(t)
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{DSN: dep[1], Warehouse: dep[3]})
	require.NoError(t, err)
	defer cat.Close()
	cold, err := cat.Table(ctx, embedded.Table())
	require.NoError(t, err)
	files, _, err := cold.PlanFiles(ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	src := files[0].Path
	m := regexp.MustCompile(`tenant=([^/]+)/from_month=(\d{4}-\d{2})/`).FindStringSubmatch(src)
	require.NotNil(t, m, "the archived files are partitioned by tenant and month: %s", src)
	foreign := filepath.Join(filepath.Dir(src), name)
	r := msql(t, "", "--scratch", "-c", `COPY (SELECT `+sel+` FROM read_parquet('`+src+`', hive_partitioning = false)
		WHERE `+where+`) TO '`+foreign+`' (FORMAT parquet)`)
	require.Equal(t, 0, r.code, r.stderr)
	month, err := time.Parse("2006-01", m[2])
	require.NoError(t, err)
	w, err := cold.Watermark(ctx)
	require.NoError(t, err)
	storetest.AddDataFile(t, ctx, cold, foreign, map[string]any{"tenant": m[1], "from_month": storetest.PartitionMonth(month)},
		iceberg.Properties{catalog.WatermarkProperty: w.UTC().Format(time.RFC3339Nano)})
	return dep
}
