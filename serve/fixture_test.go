package serve_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/serve"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a store with two tenants' readings, partly archived: statements
// read both tiers.
type fixture struct {
	s      *storetest.Store
	oracle *testkit.Oracle
	cut    time.Time
	log    *slog.Logger
	panics *atomic.Int64 // requests the servers recovered from
}

// panicMarker in a statement's text makes the servers' logger panic when it
// records that statement: a fault in the path of one request, which the
// server must survive.
const panicMarker = "/* test: panic here */"

// faultLog is the servers' logger in these tests: it prints through Handler,
// counts the requests a server recovered from a panic, and panics itself on a
// statement carrying panicMarker.
type faultLog struct {
	slog.Handler
	panics *atomic.Int64
}

// Enabled is always true, so the servers' debug records reach Handle.
func (l *faultLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *faultLog) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasSuffix(r.Message, "request panicked") {
		l.panics.Add(1)
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "sql" && strings.Contains(a.Value.String(), panicMarker) {
			panic("test fault: a statement carrying the panic marker")
		}
		return true
	})
	if !l.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return l.Handler.Handle(ctx, r)
}

func (l *faultLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &faultLog{Handler: l.Handler.WithAttrs(as), panics: l.panics}
}

func (l *faultLog) WithGroup(name string) slog.Handler {
	return &faultLog{Handler: l.Handler.WithGroup(name), panics: l.panics}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureWith(t, storetest.Options{})
}

// newFixtureWith is newFixture over a store started with opt (Now is the
// workload's).
func newFixtureWith(t testing.TB, opt storetest.Options) *fixture {
	t.Helper()
	ctx := context.Background()
	w := testkit.NewWorkload(11)
	w.MaLos, w.Days, w.Tenants, w.CorrectionRate = 4, 4, 2, 0.1
	batch, err := w.Generate()
	require.NoError(t, err)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	level := slog.LevelWarn + 4
	if os.Getenv("SERVE_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	f := &fixture{oracle: testkit.NewOracle(cfg), panics: new(atomic.Int64)}
	f.log = slog.New(&faultLog{Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}), panics: f.panics})
	opt.Now = batch.Days[0].Time()
	f.s = storetest.Start(t, opt, cfg)
	tbl := f.s.Table()
	var rows []meterstore.Row
	for _, d := range batch.Deliveries {
		rs, err := cfg.Encode(d.Series)
		require.NoError(t, err)
		rows = append(rows, rs...)
	}
	_, err = f.oracle.Record(rows...)
	require.NoError(t, err)
	for len(rows) > 0 {
		n := min(len(rows), 20000)
		_, err := tbl.Hot.Write(ctx, rows[:n])
		require.NoError(t, err)
		rows = rows[n:]
	}
	f.cut = batch.Days[len(batch.Days)-1].AddDays(-1).Time()
	out, err := tbl.Archiver.Archive(ctx, f.cut.Add(cfg.SettlementLag()), 0)
	require.NoError(t, err)
	require.True(t, out.Watermark.Equal(f.cut), "watermark %s", out.Watermark)
	return f
}

func (f *fixture) users(t testing.TB, us ...settings.UserSettings) *serve.Users {
	t.Helper()
	u, err := serve.NewUsers(f.s.Engine, us)
	require.NoError(t, err)
	return u
}

// startPG starts a pgwire server on a loopback port and returns its address.
func (f *fixture) startPG(t testing.TB, users *serve.Users) (*serve.PGServer, string) {
	t.Helper()
	return f.listenPG(t, users, "127.0.0.1:0")
}

// listenPG starts a pgwire server on addr and returns its address.
func (f *fixture) listenPG(t testing.TB, users *serve.Users, addr string) (*serve.PGServer, string) {
	t.Helper()
	srv := &serve.PGServer{Users: users, Log: f.log}
	return srv, servePGOn(t, srv, addr)
}

// servePGOn runs srv on addr until the test ends and returns its address.
func servePGOn(t testing.TB, srv *serve.PGServer, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("pgwire server did not stop")
		}
	})
	return ln.Addr().String()
}

// tablesOf is a RESTServer's Tables for a fixed list.
func tablesOf(cfgs ...meterstore.TableConfig) func() []meterstore.TableConfig {
	return func() []meterstore.TableConfig { return cfgs }
}
