package proof

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/archive"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/testhooks"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// long runs more property cases: `go test ./proof -long` or PROOF_LONG=1.
var long = flag.Bool("long", false, "run the long property suite (more seeds, bigger workloads)")

func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("PROOF_LONG") != "" {
		*long = true
	}
	pgtest.Main(m)
}

// env is one deployment: a database and a warehouse that outlive the store
// handles opened over them, so a test can "crash" a store and open a new one.
type env struct {
	ctx  context.Context
	dsn  string
	wh   string // warehouse location (file://… or, under MSQL_TEST_WAREHOUSE=s3, s3://…)
	s3   settings.S3Settings
	cfgs []meterstore.TableConfig
	now  time.Time

	// Fault switches read by the hooks of every store opened by this env.
	archiveCrash atomic.Value // archive.Step-as-string to fail at ("" none)
	coldCrash    atomic.Bool  // fail the next cold-append commit
	commitCrash  atomic.Bool  // fail the next archival commit (catalog BeforeCommit)
	compactCrash atomic.Bool  // fail the next compaction commit

	// onAcquire, when set, runs before every pool acquire of every handle (a
	// hot page is one acquire): the fault tests' way into the middle of a scan.
	onAcquire atomic.Pointer[func()]

	cur *handle
}

// handle is one opened store: its own pool, catalog and engine.
type handle struct {
	pool *pgxpool.Pool
	cat  *catalog.Catalog
	st   *store.Store
}

type archiveStep = archive.Step

var errCrash = errors.New("injected crash")

func newEnv(t testing.TB, now time.Time, cfgs ...meterstore.TableConfig) *env {
	t.Helper()
	return newEnvOn(t, pgtest.Database(t), now, cfgs...)
}

// newEnvOn opens a store over the database dsn (a dedicated cluster's).
func newEnvOn(t testing.TB, dsn string, now time.Time, cfgs ...meterstore.TableConfig) *env {
	t.Helper()
	wh, s3 := s3test.Local(t)
	e := &env{ctx: context.Background(), dsn: dsn, wh: wh, s3: s3, cfgs: cfgs, now: now}
	e.archiveCrash.Store("")
	e.cur = e.open(t, nil)
	return e
}

// open opens a new store over the env's database and warehouse.
func (e *env) open(t testing.TB, tune func(*testhooks.Hooks)) *handle {
	t.Helper()
	h := &handle{}
	var err error
	pc, err := pgxpool.ParseConfig(e.dsn)
	require.NoError(t, err)
	pc.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) {
		if f := e.onAcquire.Load(); f != nil {
			(*f)()
		}
		return true, nil
	}
	h.pool, err = pgxpool.NewWithConfig(e.ctx, pc)
	require.NoError(t, err)
	t.Cleanup(h.pool.Close)
	h.cat, err = catalog.Open(e.ctx, catalog.Options{DSN: e.dsn, Warehouse: e.wh, S3: e.s3, Pool: h.pool,
		BeforeCommit: func(_ context.Context, table, op string) error {
			if op == "cold append" && e.coldCrash.CompareAndSwap(true, false) {
				return fmt.Errorf("%w before the cold-append commit of %s", errCrash, table)
			}
			if op == "archive" && e.commitCrash.CompareAndSwap(true, false) {
				return fmt.Errorf("%w before the archival commit of %s", errCrash, table)
			}
			if op == "compact" && e.compactCrash.CompareAndSwap(true, false) {
				return fmt.Errorf("%w before the compaction commit of %s", errCrash, table)
			}
			return nil
		}})
	require.NoError(t, err)
	t.Cleanup(func() { h.cat.Close() })
	ext, err := engine.ExtensionsFromEnv()
	require.NoError(t, err)
	// The clock stays at e.now while the workload's deliveries carry their
	// own recorded_at later: the future check is off.
	cfg := store.Config{Pool: h.pool, Catalog: h.cat, Tables: e.cfgs, Now: func() time.Time { return e.now }, RecordedAtSkew: -1, Extensions: ext}
	hooks := testhooks.Hooks{Archive: func(s archiveStep) error {
		if string(s) == e.archiveCrash.Load().(string) {
			e.archiveCrash.Store("")
			return fmt.Errorf("%w at %s", errCrash, s)
		}
		return nil
	}}
	if tune != nil {
		tune(&hooks)
	}
	h.st, err = store.Open(testhooks.With(e.ctx, hooks), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { h.st.Close() })
	return h
}

// restart drops the current handle (as a crashed process would: nothing is
// closed gracefully first) and opens a new store over the same database and
// warehouse.
func (e *env) restart(t testing.TB) {
	t.Helper()
	old := e.cur
	e.cur = e.open(t, nil)
	old.st.Close()
	old.cat.Close()
	old.pool.Close()
}

func (e *env) table(t testing.TB) *store.Table {
	t.Helper()
	tbl, ok := e.cur.st.Table(e.cfgs[0].Name())
	require.True(t, ok)
	return tbl
}

func (e *env) watermark(t testing.TB) time.Time {
	t.Helper()
	w, err := e.table(t).Watermark(e.ctx)
	require.NoError(t, err)
	return w
}

func (e *env) query(t testing.TB, q string, args ...any) [][]any {
	t.Helper()
	res, err := e.cur.st.Query(e.ctx, q, args...)
	require.NoError(t, err, q)
	return res.Rows
}

func (e *env) healthy(t testing.TB) {
	t.Helper()
	r, err := e.table(t).VerifyInvariant(e.ctx)
	require.NoError(t, err)
	require.True(t, r.Healthy, r.String())
}

// hotRows counts rows in the PostgreSQL parent (attached partitions).
func (e *env) hotRows(t testing.TB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, e.cur.pool.QueryRow(e.ctx, `SELECT count(*) FROM `+meterstore.QuoteIdent(e.cfgs[0].Name())).Scan(&n))
	return n
}

// coldRows counts the rows of every file of the current snapshot.
func (e *env) coldRows(t testing.TB) int64 {
	t.Helper()
	tbl := e.table(t)
	require.NoError(t, tbl.Cold().Refresh(e.ctx))
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	var n int64
	for _, f := range files {
		n += f.Records
	}
	return n
}

func asDec(t testing.TB, v any) decimal.Decimal {
	t.Helper()
	if v == nil {
		return decimal.Zero
	}
	d, ok := v.(decimal.Decimal)
	require.True(t, ok, "%T %v", v, v)
	return d
}

func asInt(t testing.TB, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	case decimal.Decimal: // version is DECIMAL(20,0)
		require.True(t, x.IsInteger(), "%v", x)
		return x.BigInt().Int64()
	}
	require.Failf(t, "not an integer", "%T %v", v, v)
	return 0
}

var zeroT time.Time

func ptr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// winnerKey renders a resolved row as the columns a query returns, so the
// store's rows and the oracle's can be compared as sorted strings.
func winnerKey(malo, obis string, from time.Time, melo, extra string, version uint64, scope string, value decimal.Decimal, quality string) string {
	return strings.Join([]string{malo, obis, from.UTC().Format(time.RFC3339), melo, extra, fmt.Sprint(version), scope, value.String(), quality}, "|")
}

// agree checks that the store's answers for the oracle's table equal the oracle's: totals, counts,
// sums per MaLo/channel/balancing day, the per-key winners and the naive sum
// over readings_versions, which differs from the resolved sum exactly when a
// superseded version with a non-zero value is stored.
func agree(t testing.TB, e *env, o *testkit.Oracle, label string) {
	t.Helper()
	cfg := o.Config()
	res, phys := cfg.ResolvedName(), cfg.Name()
	all := time.Time{}

	r := e.query(t, `SELECT count(*), sum(value) FROM `+res)
	require.Equal(t, int64(o.RowCount(all, all)), asInt(t, r[0][0]), "%s: resolved row count", label)
	require.True(t, o.Sum(all, all).Equal(asDec(t, r[0][1])), "%s: resolved sum: oracle %s, store %s", label, o.Sum(all, all), asDec(t, r[0][1]))

	r = e.query(t, `SELECT count(*), sum(value) FROM `+phys)
	naive := asDec(t, r[0][1])
	require.Equal(t, int64(o.RawRowCount(all, all)), asInt(t, r[0][0]), "%s: readings_versions row count", label)
	require.True(t, o.NaiveSum(all, all).Equal(naive), "%s: naive sum: oracle %s, store %s", label, o.NaiveSum(all, all), naive)
	// Corrections that matter: a superseded version with a non-zero value.
	winners := map[string]bool{}
	for _, w := range o.Winners(all, all) {
		winners[fmt.Sprintf("%s|%s|%d|%s|%d", w.MaloID, w.ObisCode, w.From.UnixMicro(), extraKey(w), w.Version)] = true
	}
	corrected := false
	for _, v := range o.Current().Versions(all, all) {
		if !winners[fmt.Sprintf("%s|%s|%d|%s|%d", v.MaloID, v.ObisCode, v.From.UnixMicro(), extraKey(v), v.Version)] && !v.Value.IsZero() {
			corrected = true
			break
		}
	}
	require.Equal(t, corrected, !naive.Equal(o.Sum(all, all)), "%s: the naive sum differs exactly when corrections exist", label)

	// Sums per MaLo / channel / balancing day (the stored balancing_day against
	// the oracle's own calendar).
	want := o.SumsByMaloChannelDay(all, all)
	rows := e.query(t, `SELECT malo_id, obis_code, balancing_day, sum(value) FROM `+res+` GROUP BY ALL`)
	require.Len(t, rows, len(want), "%s: groups per MaLo/channel/day", label)
	for _, row := range rows {
		k := testkit.MaloChannelDay{MaloID: row[0].(string), ObisCode: row[1].(string), BalancingDay: metering.DateOf(row[2].(time.Time))}
		w, ok := want[k]
		require.True(t, ok, "%s: store has group %+v the oracle has not", label, k)
		require.True(t, w.Equal(asDec(t, row[3])), "%s: sum of %+v: oracle %s, store %s", label, k, w, asDec(t, row[3]))
	}

	// Per-key winners.
	var extraCols []string
	for _, c := range cfg.ExtraColumns() {
		extraCols = append(extraCols, meterstore.QuoteIdent(c.Name))
	}
	extraSel := `''`
	if len(extraCols) > 0 {
		extraSel = `concat_ws(',', ` + strings.Join(extraCols, ", ") + `)`
	}
	rows = e.query(t, `SELECT malo_id, obis_code, "from", coalesce(melo_id, ''), `+extraSel+`, version, version_scope, value, quality FROM `+res)
	got := make([]string, 0, len(rows))
	for _, row := range rows {
		got = append(got, winnerKey(row[0].(string), row[1].(string), row[2].(time.Time), row[3].(string), row[4].(string),
			uint64(asInt(t, row[5])), row[6].(string), asDec(t, row[7]), row[8].(string)))
	}
	var exp []string
	for _, w := range o.Winners(all, all) {
		exp = append(exp, winnerKey(w.MaloID, w.ObisCode, w.From, ptr(w.MeloID), extraKey(w), w.Version, w.VersionScope, w.Value, w.Quality))
	}
	sort.Strings(got)
	sort.Strings(exp)
	if len(got) != len(exp) {
		require.Equal(t, len(exp), len(got), "%s: winners", label)
	}
	for i := range exp {
		if exp[i] != got[i] {
			require.Equal(t, exp[i], got[i], "%s: first differing winner", label)
		}
	}
}

func extraKey(r meterstore.Row) string {
	parts := make([]string, len(r.Extra))
	for i, x := range r.Extra {
		parts[i] = ptr(x)
	}
	return strings.Join(parts, ",")
}
