package serve_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/internal/pgtest"
	"meterstore/internal/storetest"
	"meterstore/serve"
	"meterstore/testkit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a store with two tenants' readings, partly archived: statements
// read both tiers.
type fixture struct {
	s      *storetest.Store
	oracle *testkit.Oracle
	cut    time.Time
	log    *slog.Logger
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, storetest.Options{})
}

// newFixtureWith is newFixture over a store started with opt (Now is the
// workload's).
func newFixtureWith(t *testing.T, opt storetest.Options) *fixture {
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
	f := &fixture{oracle: testkit.NewOracle(cfg), log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))}
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

func (f *fixture) users(t *testing.T, us ...meterstore.UserSettings) *serve.Users {
	t.Helper()
	u, err := serve.NewUsers(f.s.Engine, us)
	require.NoError(t, err)
	return u
}

// startPG starts a pgwire server on a loopback port and returns its address.
func (f *fixture) startPG(t *testing.T, users *serve.Users) (*serve.PGServer, string) {
	t.Helper()
	return f.listenPG(t, users, "127.0.0.1:0")
}

// listenPG starts a pgwire server on addr and returns its address.
func (f *fixture) listenPG(t *testing.T, users *serve.Users, addr string) (*serve.PGServer, string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	srv := &serve.PGServer{Users: users, Log: f.log}
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
	return srv, ln.Addr().String()
}
