package hot_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	op1 = "9910125000002"
	op2 = "9904768000008"

	maloA = "41373559241"
	maloB = "51238696781"
	maloC = "56789012345"
	maloD = "52935155442"

	obisImport = "1-0:1.29.0"
	obisExport = "1-0:2.29.0"

	meloA = "DE0001234567890ABCDEFGHIJKLMNOPQR"
	meloB = "DE0001234567890ABCDEFGHIJKLMNOPQS"
)

// testNow is the fixed "now" every store is created at: partitions cover
// [2026-03-09, 2026-03-24).
var testNow = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)

var scopeMar = op1 + ":2026-03"

func ptr[T any](v T) *T { return &v }

func openPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := pgtest.Database(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

func newStore(t testing.TB, spec meterstore.TableSpec) (*hot.Store, *pgxpool.Pool) {
	t.Helper()
	pool := openPool(t)
	return storeOn(t, pool, spec), pool
}

// storeOn creates spec's tables in pool's database, for tests that put
// several tables side by side.
func storeOn(t testing.TB, pool *pgxpool.Pool, spec meterstore.TableSpec) *hot.Store {
	t.Helper()
	cfg, err := spec.Build()
	require.NoError(t, err)
	st := hot.New(pool, cfg)
	require.NoError(t, st.CreateTables(context.Background(), testNow))
	return st
}

// iv is an interval row on an interval table without extra columns.
func iv(malo, obis string, from time.Time, dur time.Duration, value string, version uint64) meterstore.Row {
	to := from.Add(dur)
	return meterstore.Row{
		MaloID: malo, ObisCode: obis, Sparte: "STROM", From: from, To: &to,
		Value: decimal.RequireFromString(value), Unit: "KWH", Quality: "MEASURED",
		SourceKind: "MSCONS", SourceDetail: ptr(`{"MSCONS":{"sender":"9910125000002","message_ref":"M1"}}`),
		Version: version, VersionScope: scopeMar, RecordedAt: testNow,
	}
}

func qh(malo, obis string, from time.Time, value string, version uint64) meterstore.Row {
	r := iv(malo, obis, from, 15*time.Minute, value, version)
	r.Resolution = ptr("PT15M")
	return r
}

func count(t testing.TB, st *hot.Store) int64 {
	t.Helper()
	n, err := st.CountRows(context.Background(), st.Config().Name())
	require.NoError(t, err)
	return n
}
