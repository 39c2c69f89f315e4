package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglocal"
)

// ErrNotRunning means no PostgreSQL runs under the home Find looked in.
var ErrNotRunning = errors.New("the embedded PostgreSQL is not running")

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

// Options for Open. The zero value opens Home(), durable, and stops a
// cluster it started on Close.
type Options struct {
	// Home is the data directory; "" is Home().
	Home string
	// KeepRunning leaves a cluster Open starts running after Close and after
	// this process exits, for the next command to reuse.
	KeepRunning bool
	// Throwaway runs a cluster Open starts without fsync, synchronous commit
	// and full-page writes: faster, but a power loss can lose rows reported
	// written. For tests and demo data only; a running cluster keeps the
	// durability it was started with.
	Throwaway bool
	// Log receives one line when Open initialises a new cluster; nil discards it.
	Log io.Writer
}

// Deployment is the embedded default's location, and the cluster Open started.
type Deployment struct {
	Home      string
	DSN       string // the cluster's superuser on loopback, database postgres
	Warehouse string // file:// URI of Home/warehouse
	// Started reports whether Open started the cluster (else it was running).
	Started bool
	server  *pglocal.Server // stopped by Close; nil when reused or kept running
}

// Open returns the embedded default under opt.Home, starting its PostgreSQL
// if it is not running (initialising the cluster and the warehouse directory
// on first use).
func Open(ctx context.Context, opt Options) (*Deployment, error) {
	home := opt.Home
	if home == "" {
		home = Home()
	}
	wh := filepath.Join(home, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return nil, fmt.Errorf("embedded default: create the warehouse directory: %w", err)
	}
	d := &Deployment{Home: home, Warehouse: "file://" + wh}
	data := filepath.Join(home, "pg")
	if port, ok := runningPort(data); ok {
		d.DSN = dsn(port)
		return d, nil
	}
	bin, err := pglocal.FindBinaries()
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("embedded default: %w", err)
		}
	}
	srv, err := pglocal.Start(ctx, bin, data, pglocal.Options{Detach: opt.KeepRunning, Durability: durability})
	if err != nil {
		return nil, fmt.Errorf("embedded default: %w", err)
	}
	d.DSN, d.Started = srv.DSN("postgres"), true
	if !opt.KeepRunning {
		d.server = srv
	}
	return d, nil
}

// Find returns the embedded default under home ("" is Home()) if its
// PostgreSQL is running, and ErrNotRunning otherwise. It starts nothing.
func Find(home string) (*Deployment, error) {
	if home == "" {
		home = Home()
	}
	port, ok := runningPort(filepath.Join(home, "pg"))
	if !ok {
		return nil, fmt.Errorf("%w in %s: start it with `msql --keep-running`, or open it with embedded.Open", ErrNotRunning, home)
	}
	return &Deployment{Home: home, DSN: dsn(port), Warehouse: "file://" + filepath.Join(home, "warehouse")}, nil
}

// Close stops the cluster if Open started it and was not asked to keep it running.
func (d *Deployment) Close() error {
	if d.server == nil {
		return nil
	}
	err := d.server.Stop()
	d.server = nil
	return err
}

func dsn(port int) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", pglocal.Superuser, port)
}

// runningPort reads the port of a cluster running in data from its
// postmaster.pid (line 1 the pid, line 4 the port), if that process lives.
func runningPort(data string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return 0, false
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err2 := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	if p, err := os.FindProcess(pid); err != nil || p.Signal(syscall.Signal(0)) != nil {
		return 0, false
	}
	return port, true
}
