package catalog

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	opA = "9910125000002"
	opB = "9904768000008"
)

var malos = []string{"41373559241", "51238696781", "56789012345", "52935155442"}

func testConfig(t testing.TB) meterstore.TableConfig {
	cfg, err := meterstore.TableSpec{
		Name:      "readings_versions",
		TimeModel: meterstore.Interval,
		Columns: []meterstore.Column{
			{Name: "tenant", Kind: meterstore.Identity},
			{Name: "contract", Kind: meterstore.Attribute, Nullable: true},
		},
	}.Build()
	require.NoError(t, err)
	return cfg
}

type env struct {
	cat  *Catalog
	cfg  meterstore.TableConfig
	pool *pgxpool.Pool
	dsn  string
	wh   string
}

func newEnv(t testing.TB, opts ...func(*Options)) *env {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.Database(t)
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	wh, s3 := s3test.Local(t)
	o := Options{DSN: dsn, Warehouse: wh, S3: s3, Pool: pool}
	for _, f := range opts {
		f(&o)
	}
	c, err := Open(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &env{cat: c, cfg: testConfig(t), pool: pool, dsn: dsn, wh: wh}
}

func strp(s string) *string { return &s }

// mkRow builds one quarter-hour row, valid as a write path stores it: the
// version scope names op and the row's Bilanzierungsmonat, balancing_day is
// the calendar's.
func mkRow(malo, tenant string, from time.Time, value string, version uint64, op string) meterstore.Row {
	from = from.UTC()
	to := from.Add(15 * time.Minute)
	return meterstore.Row{
		MaloID: malo, ObisCode: "1-1:1.29.0", Sparte: "STROM",
		From: from, To: &to, Value: decimal.RequireFromString(value), Unit: "KWH", Quality: "MEASURED",
		Resolution: strp("PT15M"), SourceKind: "mscons", SourceDetail: strp(`{"kind":"mscons"}`),
		Version: version, VersionScope: op + ":" + metering.BalancingMonth(from, metering.SparteStrom).String()[:7],
		RecordedAt:   from.Add(time.Hour),
		BalancingDay: metering.BalancingDay(from, metering.SparteStrom).Time(),
		Extra:        []*string{strp(tenant), nil},
	}
}

// genRows makes n quarter-hours per MaLo starting at start, sorted in keyset order.
func genRows(start time.Time, n int, tenant string, version uint64) []meterstore.Row {
	var rows []meterstore.Row
	for mi, m := range malos {
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("%d.%06d", mi*1000+i, (i*37)%1000000)
			rows = append(rows, mkRow(m, tenant, start.Add(time.Duration(i)*15*time.Minute), v, version, opA))
		}
	}
	sortKeyset(rows)
	return rows
}

func sortKeyset(rows []meterstore.Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.MaloID != b.MaloID {
			return a.MaloID < b.MaloID
		}
		if a.ObisCode != b.ObisCode {
			return a.ObisCode < b.ObisCode
		}
		if !a.From.Equal(b.From) {
			return a.From.Before(b.From)
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return *a.Extra[0] < *b.Extra[0]
	})
}

// readAll reads every row of the current snapshot through iceberg-go.
func readAll(t *testing.T, tb *Table) []meterstore.Row {
	t.Helper()
	rows, err := tb.ReadRows(context.Background(), PlanRequest{})
	require.NoError(t, err)
	sortKeyset(rows)
	return rows
}

func rowKey(r meterstore.Row) string {
	return fmt.Sprintf("%s|%s|%s|%d|%s|%s|%s", r.MaloID, r.ObisCode, r.From.Format(time.RFC3339Nano), r.Version, r.Value, r.VersionScope, *r.Extra[0])
}

func rowSet(rows []meterstore.Row) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[rowKey(r)]++
	}
	return m
}

func testConfigNamed(t testing.TB, name string) meterstore.TableConfig {
	s := testConfig(t).Spec()
	s.Name = name
	cfg, err := s.Build()
	require.NoError(t, err)
	return cfg
}
