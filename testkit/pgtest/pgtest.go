// Package pgtest gives every test a fresh database on a real PostgreSQL: one
// throwaway cluster per test binary, started on first use from the system's
// binaries, in a temporary directory, on a free loopback port, and removed when
// the binary exits — also when tests fail.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		dsn := pgtest.Database(t) // a new, empty database, dropped afterwards
//	}
//
// testkit/storetest builds a whole store on it. MSQL_TEST_DATABASE_URL, when
// set, names an existing server (a role that may CREATE DATABASE) to use
// instead of starting a cluster.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore/internal/pglocal"
)

var (
	once     sync.Once
	adminDSN string
	startErr error
	server   *pglocal.Server
	tmpDir   string
)

// Main runs the tests and stops the cluster afterwards, whatever their outcome.
func Main(m *testing.M) {
	code := m.Run()
	Shutdown()
	os.Exit(code)
}

// OnShutdown registers f to run in Shutdown, before the cluster stops: other
// servers a test binary started beside it (the S3 server of internal/testrig/s3test)
// end with it, through the TestMain every package already has.
func OnShutdown(f func()) {
	hooksMu.Lock()
	hooks = append(hooks, f)
	hooksMu.Unlock()
}

var (
	hooksMu sync.Mutex
	hooks   []func()
)

// Shutdown stops the shared cluster, if one was started, and removes its directory.
func Shutdown() {
	hooksMu.Lock()
	fs := hooks
	hooks = nil
	hooksMu.Unlock()
	for _, f := range fs {
		f()
	}
	if server != nil {
		_ = server.Stop()
		server = nil
	}
	if tmpDir != "" {
		_ = os.RemoveAll(tmpDir)
		tmpDir = ""
	}
}

func start() {
	if u := os.Getenv("MSQL_TEST_DATABASE_URL"); u != "" {
		adminDSN = u
		return
	}
	bin, err := pglocal.FindBinaries()
	if err != nil {
		startErr = err
		return
	}
	tmpDir, err = os.MkdirTemp("", "pgtest-")
	if err != nil {
		startErr = err
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := tmpDir + "/data"
	if err := pglocal.Init(ctx, bin, data, pglocal.Throwaway); err != nil {
		startErr = err
		return
	}
	server, err = pglocal.Start(ctx, bin, data, pglocal.Options{Durability: pglocal.Throwaway})
	if err != nil {
		startErr = err
		return
	}
	adminDSN = server.DSN("postgres")
}

// AdminDSN returns the DSN of the maintenance database of the shared cluster,
// starting it if needed. It fails the test with the fix when no PostgreSQL is available.
//
// With MSQL_TEST_POSTGRES=none it skips the test instead: `go tool task unit`
// runs a package's tests that need no PostgreSQL that way, so which tests those
// are is decided by what each test uses, not by a list kept beside them.
func AdminDSN(t testing.TB) string {
	t.Helper()
	if os.Getenv("MSQL_TEST_POSTGRES") == "none" {
		t.Skip("needs PostgreSQL (MSQL_TEST_POSTGRES=none)")
	}
	once.Do(start)
	if startErr != nil {
		t.Fatalf("pgtest: a real PostgreSQL is required: %v", startErr)
	}
	return adminDSN
}

// Database creates a new, empty database for this test and returns its DSN. The
// database is dropped when the test ends.
func Database(t testing.TB) string {
	t.Helper()
	admin := AdminDSN(t)
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return withDatabase(admin, name)
}

func withDatabase(dsn, db string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	u.Path = "/" + db
	return u.String()
}

// Connect opens a connection to dsn, closed when the test ends.
func Connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs statements on dsn and fails the test on error.
func Exec(t testing.TB, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// Server returns the shared cluster, or nil when MSQL_TEST_DATABASE_URL is used.
// Fault tests restart it through this.
func Server(t testing.TB) *pglocal.Server {
	AdminDSN(t)
	return server
}

// String describes where the tests' PostgreSQL runs.
func String() string {
	if server != nil {
		return fmt.Sprintf("private cluster %s on port %d", server.DataDir, server.Port)
	}
	return "MSQL_TEST_DATABASE_URL"
}
