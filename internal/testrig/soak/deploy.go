package soak

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/meterstore/meterstore/internal/pglocal"
)

// Users of msql serve: the analyst reads everything, the scoped user one tenant.
const (
	analyst, analystPassword = "analyst", "soak-analyst"
	scoped, scopedPassword   = "tenant01-reader", "soak-scoped"
	scopedTenant             = "tenant01"
)

// deployment is what the soak runs: a durable PostgreSQL cluster behind a
// cutting proxy, a file warehouse on a small filesystem, and msql serve and
// msql maintenance as processes of the msql binary built from cmd/msql.
type deployment struct {
	work      string
	msql      string
	pg        *pglocal.Server
	proxy     *proxy
	warehouse string // directory
	// mounted: the warehouse is a tmpfs of warehouseBytes the soak mounted,
	// so the full-disk fault fills it; mountErr says why not otherwise.
	mounted  bool
	mountErr error
	config   string

	serve, maintenance     *process
	pgwire, flight, health string
	slow                   slowWarehouse // the soak's own cold-tier file IO
}

const warehouseBytes = 256 << 20

func (o Options) deploy(ctx context.Context, root string) (*deployment, error) {
	d := &deployment{work: o.Work}
	d.msql = filepath.Join(d.work, "msql")
	build := exec.CommandContext(ctx, "go", "build", "-o", d.msql, "./cmd/msql")
	build.Dir, build.Stdout, build.Stderr = root, o.Log, o.Log
	if err := build.Run(); err != nil {
		return d, fmt.Errorf("build msql: %w", err)
	}
	if err := d.startPostgres(ctx); err != nil {
		return d, err
	}
	var err error
	if d.proxy, err = newProxy("127.0.0.1:" + strconv.Itoa(d.pg.Port)); err != nil {
		return d, err
	}
	d.warehouse = filepath.Join(d.work, "warehouse")
	if err := os.MkdirAll(d.warehouse, 0o755); err != nil {
		return d, err
	}
	d.mountErr = syscall.Mount("tmpfs", d.warehouse, "tmpfs", 0, "size="+strconv.Itoa(warehouseBytes))
	d.mounted = d.mountErr == nil
	if err := d.writeConfig(); err != nil {
		return d, err
	}
	return d, d.startServers(ctx)
}

func (d *deployment) startPostgres(ctx context.Context) (err error) {
	d.pg, err = pglocal.New(ctx, filepath.Join(d.work, "pg"), pglocal.Durable, "meterstore")
	return err
}

// dsn reaches PostgreSQL through the proxy: every client of the deployment
// (the servers, the soak's writers) has its connections cut with it.
func (d *deployment) dsn() string {
	return strings.Replace(d.pg.DSN("meterstore"), "127.0.0.1:"+strconv.Itoa(d.pg.Port), d.proxy.addr(), 1)
}

// writeConfig declares one interval table with a tenant identity column and
// hourly windows settled after an hour, so maintenance archives throughout.
func (d *deployment) writeConfig() error {
	d.config = filepath.Join(d.work, "meterstore.toml")
	cfg := fmt.Sprintf(`[hot]
url = %q

[cold]
warehouse = %q

[[tables]]
name = "readings_versions"
[tables.hot]
partition_step = "1h"
partition_headroom = "6h"
[tables.archival]
archival_step = "1h"
settlement_lag = "1h"
[[tables.extra_columns]]
name = "tenant"
identity = true

[[users]]
name = %q
password = %q

[[users]]
name = %q
password = %q
scope = "tenant=%s"
`, d.dsn(), "file://"+d.warehouse, analyst, analystPassword, scoped, scopedPassword, scopedTenant)
	return os.WriteFile(d.config, []byte(cfg), 0o600)
}

func (d *deployment) startServers(ctx context.Context) error {
	ports := make([]int, 4)
	for i := range ports {
		p, err := pglocal.FreePort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	d.pgwire, d.flight, d.health = addr(ports[0]), addr(ports[1]), addr(ports[2])
	var err error
	d.serve, err = newProcess("msql serve", d.msql, filepath.Join(d.work, "serve.log"), d.health,
		"serve", "--config", d.config, "--pgwire", d.pgwire, "--flight", d.flight, "--iceberg-rest", d.health, "--memory-limit", serveMemoryBudget)
	if err != nil {
		return err
	}
	d.maintenance, err = newProcess("msql maintenance", d.msql, filepath.Join(d.work, "maintenance.log"), addr(ports[3]),
		"maintenance", "--config", d.config, "--interval", "1s", "--max-windows", "2",
		"--compact", "--compact-quiet", "5s", "--orphan-age", "1h", "--health", addr(ports[3]))
	if err != nil {
		return err
	}
	return errors.Join(d.serve.start(ctx), d.maintenance.start(ctx))
}

// recover runs one `msql maintenance --once` with no window limit: the
// recovery run an operator starts after an incident.
func (d *deployment) recover(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, d.msql, "maintenance", "--config", d.config, "--once", "--max-windows", "0").CombinedOutput()
	return string(out), err
}

// fill writes a ballast file until the warehouse filesystem is full.
func (d *deployment) fill() (string, error) {
	path := filepath.Join(d.warehouse, "ballast")
	f, err := os.Create(path)
	if err != nil {
		return path, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path, nil
			}
			return path, err
		}
	}
}

func (d *deployment) tearDown() error {
	var errs []error
	for _, p := range []*process{d.serve, d.maintenance} {
		if p != nil {
			errs = append(errs, p.stop())
		}
	}
	if d.proxy != nil {
		d.proxy.close()
	}
	if d.pg != nil {
		errs = append(errs, d.pg.Stop())
	}
	if d.mounted {
		errs = append(errs, syscall.Unmount(d.warehouse, 0))
	}
	return errors.Join(errs...)
}
