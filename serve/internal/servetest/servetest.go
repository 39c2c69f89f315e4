// Package servetest is the fixture the serve packages' tests share: a store of
// two tenants' readings, partly archived, and the servers started over it on
// loopback ports until the test ends.
package servetest

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
	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/flightsql"
	"github.com/meterstore/meterstore/serve/pgwire"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// Fixture is a store with two tenants' readings, partly archived: statements
// read both tiers.
type Fixture struct {
	Store  *storetest.Store
	Oracle *testkit.Oracle
	Cut    time.Time // the watermark: rows before it are in Iceberg
	Log    *slog.Logger
	Panics *atomic.Int64 // requests the servers recovered from
}

// PanicMarker in a statement's text makes the servers' logger panic when it
// records that statement: a fault in the path of one request, which the
// server must survive.
const PanicMarker = "/* test: panic here */"

// faultLog is the servers' logger in these tests: it prints through Handler,
// counts the requests a server recovered from a panic, and panics itself on a
// statement carrying PanicMarker.
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
		if a.Key == "sql" && strings.Contains(a.Value.String(), PanicMarker) {
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

// New starts a fixture's store for one test.
func New(t testing.TB) *Fixture {
	t.Helper()
	return NewWith(t, storetest.Options{})
}

// NewWith is New over a store started with opt (Now is the
// workload's).
func NewWith(t testing.TB, opt storetest.Options) *Fixture {
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
	f := &Fixture{Oracle: testkit.NewOracle(cfg), Panics: new(atomic.Int64)}
	f.Log = slog.New(&faultLog{Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}), panics: f.Panics})
	opt.Now = batch.Days[0].Time()
	f.Store = storetest.Start(t, opt, cfg)
	tbl := f.Store.Table()
	storetest.WriteHot(t, tbl, f.Oracle, batch.Deliveries)
	f.Cut = batch.Days[len(batch.Days)-1].AddDays(-1).Time()
	out, err := tbl.Archiver.Archive(ctx, f.Cut.Add(cfg.SettlementLag()), 0)
	require.NoError(t, err)
	require.True(t, out.Watermark.Equal(f.Cut), "watermark %s", out.Watermark)
	return f
}

// Users are the accounts us over the fixture's engine (none: loopback
// without authentication).
func (f *Fixture) Users(t testing.TB, us ...settings.UserSettings) *access.Users {
	t.Helper()
	u, err := access.NewUsers(f.Store.Engine, us)
	require.NoError(t, err)
	return u
}

// StartPG starts a pgwire server on a loopback port and returns its address.
func (f *Fixture) StartPG(t testing.TB, users *access.Users) (*pgwire.Server, string) {
	t.Helper()
	return f.ListenPG(t, users, "127.0.0.1:0")
}

// ListenPG starts a pgwire server on addr and returns its address.
func (f *Fixture) ListenPG(t testing.TB, users *access.Users, addr string) (*pgwire.Server, string) {
	t.Helper()
	srv := &pgwire.Server{Users: users, Log: f.Log}
	return srv, ServePGOn(t, srv, addr)
}

// ServePGOn runs srv on addr until the test ends and returns its address.
func ServePGOn(t testing.TB, srv *pgwire.Server, addr string) string {
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

// StartFlight starts a Flight SQL server on a loopback port and returns its
// address.
func (f *Fixture) StartFlight(t testing.TB, users *access.Users) string {
	t.Helper()
	srv, err := flightsql.NewServer(users, f.Log)
	require.NoError(t, err)
	return ServeFlight(t, srv)
}

// ServeFlight serves srv on a loopback port until the test ends and returns
// its address.
func ServeFlight(t testing.TB, srv *flightsql.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(15 * time.Second):
			t.Error("flight server did not stop")
		}
	})
	return ln.Addr().String()
}

// TablesOf is an Iceberg REST server's Tables for a fixed list.
func TablesOf(cfgs ...meterstore.TableConfig) func() []meterstore.TableConfig {
	return func() []meterstore.TableConfig { return cfgs }
}
