package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglocal"
)

// ErrNotRunning means no PostgreSQL runs under the home Find looked in.
var ErrNotRunning = errors.New("the embedded PostgreSQL is not running")

// ErrInUse means Stop found processes using the cluster (a shell, msql serve).
var ErrInUse = errors.New("the embedded PostgreSQL is in use by other msql processes; quit them first")

// ErrNoPostgres means the system has no PostgreSQL server binaries to run
// the embedded cluster from; the message names the package to install.
var ErrNoPostgres = pglocal.ErrNoBinaries

// Home is the embedded default's data directory: $MSQL_HOME, else
// $XDG_DATA_HOME/msql, else ~/.local/share/msql.
func Home() string {
	if h := os.Getenv("MSQL_HOME"); h != "" {
		return h
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "msql")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "msql")
	}
	return filepath.Join(home, ".local", "share", "msql")
}

// Table is the embedded default's table, the one msql demo loads: intervals,
// identified per tenant.
func Table() meterstore.TableConfig {
	return meterstore.TableSpec{
		Name:    "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}},
	}.MustBuild()
}

// Options for Open. The zero value opens Home(), durable, and stops the
// cluster on Close when no other process uses it.
type Options struct {
	// Home is the data directory; "" is Home().
	Home string
	// KeepRunning leaves the cluster running after Close even when this
	// process was its last user, for the next command to reuse (msql stop
	// stops it).
	KeepRunning bool
	// Throwaway runs a cluster Open starts without fsync, synchronous commit
	// and full-page writes: faster, but a power loss can lose rows reported
	// written. For tests and demo data only; a running cluster keeps the
	// durability it was started with.
	Throwaway bool
	// Log receives one line when Open initialises a new cluster; nil discards it.
	Log io.Writer
}

// Deployment is the embedded default's location, and this process's use of
// its cluster.
type Deployment struct {
	Home      string
	DSN       string // the cluster's superuser on loopback, database postgres
	Warehouse string // file:// URI of Home/warehouse
	// Started reports whether Open started the cluster (else it was running).
	Started bool
	users   *users // held until Close; nil for Find
	keep    bool
}

// Open returns the embedded default under opt.Home, starting its PostgreSQL
// if it is not running (initialising the cluster and the warehouse directory
// on first use). Every process sharing a home uses one cluster: it is
// started in a session of its own, so it outlives the process that started
// it, and runs until the last process using it closes (see users).
func Open(ctx context.Context, opt Options) (*Deployment, error) {
	home := opt.Home
	if home == "" {
		home = Home()
	}
	wh := filepath.Join(home, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return nil, fmt.Errorf("embedded default: create the warehouse directory: %w", err)
	}
	u, err := lockUsers(ctx, home)
	if err != nil {
		return nil, fmt.Errorf("embedded default: %w", err)
	}
	d := &Deployment{Home: home, Warehouse: "file://" + wh, keep: opt.KeepRunning}
	if err := d.startOrReuse(ctx, opt); err != nil {
		u.release()
		return nil, err
	}
	if err := u.done(); err != nil {
		u.release()
		return nil, fmt.Errorf("embedded default: %w", err)
	}
	d.users = u
	return d, nil
}

// startOrReuse finds the running cluster or starts one, while this process
// holds the start lock: no other process starts or stops it meanwhile.
func (d *Deployment) startOrReuse(ctx context.Context, opt Options) error {
	data := filepath.Join(d.Home, "pg")
	if port, ok := runningPort(data); ok {
		d.DSN = dsn(port)
		return nil
	}
	bin, err := pglocal.FindBinaries()
	if err != nil {
		return err
	}
	durability := pglocal.Durable
	if opt.Throwaway {
		durability = pglocal.Throwaway
	}
	if !pglocal.Initialised(data) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "initialising the embedded PostgreSQL in %s\n", data)
		}
		if err := pglocal.Init(ctx, bin, data, durability); err != nil {
			return fmt.Errorf("embedded default: %w", err)
		}
	}
	srv, err := pglocal.Start(ctx, bin, data, pglocal.Options{Detach: true, Durability: durability})
	if err != nil {
		return fmt.Errorf("embedded default: %w", err)
	}
	d.DSN, d.Started = srv.DSN("postgres"), true
	return nil
}

// Find returns the embedded default under home ("" is Home()) if its
// PostgreSQL is running, and ErrNotRunning otherwise. It starts nothing.
func Find(home string) (*Deployment, error) {
	if home == "" {
		home = Home()
	}
	port, ok := runningPort(filepath.Join(home, "pg"))
	if !ok {
		return nil, fmt.Errorf("%w in %s: msql (or embedded.Open) starts it", ErrNotRunning, home)
	}
	return &Deployment{Home: home, DSN: dsn(port), Warehouse: "file://" + filepath.Join(home, "warehouse")}, nil
}

// Close ends this process's use of the cluster, and stops it when no other
// process uses it (unless opened with KeepRunning).
func (d *Deployment) Close() error {
	u := d.users
	if u == nil {
		return nil
	}
	d.users = nil
	defer u.release()
	if d.keep || !u.last() {
		return nil
	}
	return stop(filepath.Join(d.Home, "pg"))
}

// Stop stops the cluster under home ("" is Home()) if it runs, unless a
// process uses it (ErrInUse): the way to stop one left running by KeepRunning
// or by a process that was killed.
func Stop(ctx context.Context, home string) error {
	if home == "" {
		home = Home()
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	u, err := openUsers(home)
	if err != nil {
		return err
	}
	defer u.release()
	if !u.last() {
		if hs := holders(home); len(hs) > 0 {
			return fmt.Errorf("%w in %s: %s", ErrInUse, home, strings.Join(hs, ", "))
		}
		return fmt.Errorf("%w in %s", ErrInUse, home)
	}
	return stop(filepath.Join(home, "pg"))
}

func dsn(port int) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", pglocal.Superuser, port)
}

// runningPort reads the port of a cluster running in data from its
// postmaster.pid (line 1 the pid, line 4 the port), if that process lives
// and the port accepts connections.
func runningPort(data string) (int, bool) {
	pid, port, ok := postmaster(data)
	if !ok || !alive(pid) {
		return 0, false
	}
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
	if err != nil {
		return 0, false
	}
	c.Close()
	return port, true
}

func postmaster(data string) (pid, port int, ok bool) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err2 := strconv.Atoi(strings.TrimSpace(lines[3]))
	return pid, port, err1 == nil && err2 == nil
}

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// stop shuts the cluster in data down (fast: sessions ended, a checkpoint
// written) and waits until its postmaster has removed postmaster.pid.
func stop(data string) error {
	pid, _, ok := postmaster(data)
	if !ok || !alive(pid) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
		return fmt.Errorf("embedded default: stop PostgreSQL (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("embedded default: PostgreSQL (pid %d) still running 60 s after the stop request; see %s", pid, filepath.Join(data, "server.log"))
}
