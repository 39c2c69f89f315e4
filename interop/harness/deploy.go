package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meterstore/meterstore/internal/pglocal"
)

type options struct {
	work       string // working directory; a fresh temporary one by default
	python     string // the virtualenv's interpreter
	suites     []string
	keep       bool
	malos      int
	days       int
	correction float64
	pytestArgs []string
}

var allSuites = []string{"python", "java"}

func parseOptions(args []string) (options, error) {
	var opt options
	var suites string
	fs := flag.NewFlagSet("interop", flag.ContinueOnError)
	fs.StringVar(&opt.work, "work", "", "working directory (PostgreSQL cluster, warehouse, logs); default a fresh temporary one, removed after a passing run")
	fs.StringVar(&opt.python, "python", "interop/.venv/bin/python", "Python of the virtualenv holding interop/requirements.txt")
	fs.StringVar(&suites, "suites", strings.Join(allSuites, ","), "suites to run: python, java")
	fs.BoolVar(&opt.keep, "keep", false, "set up, print the environment as export lines, and wait for Ctrl-C (to run one program by hand)")
	fs.IntVar(&opt.malos, "malos", 12, "MaLos in the demo portfolio")
	fs.IntVar(&opt.days, "days", 21, "days in the demo portfolio (the last week stays hot)")
	fs.Float64Var(&opt.correction, "correction-rate", 0.1, "fraction of (MaLo, channel, day) groups restated after archival")
	if err := fs.Parse(args); err != nil {
		return opt, err
	}
	opt.pytestArgs = fs.Args()
	for _, s := range strings.Split(suites, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if s != "python" && s != "java" {
			return opt, fmt.Errorf("unknown suite %q (python, java)", s)
		}
		opt.suites = append(opt.suites, s)
	}
	return opt, nil
}

// Users of the deployment: an unscoped analyst and a user confined to one tenant.
const (
	analyst         = "analyst"
	analystPassword = "interop-analyst"
	scopedUser      = "tenant01_reader"
	scopedPassword  = "interop-scoped"
	scopedTenant    = "tenant01"
)

// deployment is what setUp started; tearDown stops it.
type deployment struct {
	root, work, msql, config string
	removeWork               bool
	pg                       *pglocal.Server
	serve                    *exec.Cmd
	serveDone                chan error
	serveLog                 string
	pgPort, flight, rest     int
	expected                 string
	sparkJar                 string // the Iceberg Spark runtime in the local Maven repository
	ok                       bool
}

func setUp(ctx context.Context, opt options) (*deployment, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	d := &deployment{root: root, work: opt.work}
	if d.work == "" {
		if d.work, err = os.MkdirTemp("", "meterstore-interop-"); err != nil {
			return nil, err
		}
		d.removeWork = !opt.keep
	}
	if d.work, err = filepath.Abs(d.work); err != nil {
		return d, err
	}
	step := func(what string, f func() error) error {
		start := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		fmt.Fprintf(os.Stderr, "interop: %s (%s)\n", what, time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	if err := step("build msql", func() error { return d.buildMsql(ctx) }); err != nil {
		return d, err
	}
	if err := step("find the Iceberg Spark runtime", func() error { return d.findSparkJar(ctx) }); err != nil {
		return d, err
	}
	if err := step("start PostgreSQL", func() error { return d.startPostgres(ctx) }); err != nil {
		return d, err
	}
	if err := step("load the demo portfolio", func() error { return d.loadDemo(ctx, opt) }); err != nil {
		return d, err
	}
	if err := step("compute expected values (msql and the oracle)", func() error { return d.writeExpected(ctx, opt) }); err != nil {
		return d, err
	}
	if err := step("start msql serve", func() error { return d.startServe(ctx) }); err != nil {
		return d, err
	}
	return d, nil
}

func (d *deployment) buildMsql(ctx context.Context) error {
	d.msql = filepath.Join(d.work, "msql")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", d.msql, "./cmd/msql")
	cmd.Dir, cmd.Stdout, cmd.Stderr = d.root, os.Stderr, os.Stderr
	return cmd.Run()
}

// findSparkJar asks Maven for interop/java's classpath, which pins the
// Iceberg Spark runtime PySpark loads.
func (d *deployment) findSparkJar(ctx context.Context) error {
	out := filepath.Join(d.work, "classpath.txt")
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-f", filepath.Join(d.root, "interop", "java", "pom.xml"),
		"dependency:build-classpath", "-Dmdep.outputFile="+out)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return err
	}
	cp, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	for _, p := range strings.Split(strings.TrimSpace(string(cp)), string(os.PathListSeparator)) {
		if strings.Contains(filepath.Base(p), "iceberg-spark-runtime") {
			d.sparkJar = p
			return nil
		}
	}
	return errors.New("interop/java/pom.xml's classpath has no iceberg-spark-runtime jar")
}

func (d *deployment) startPostgres(ctx context.Context) (err error) {
	d.pg, err = pglocal.New(ctx, filepath.Join(d.work, "pg"), pglocal.Throwaway, "meterstore")
	return err
}

// catalogDSN is the PostgreSQL holding the hot tier and the SQL catalog.
func (d *deployment) catalogDSN() string { return d.pg.DSN("meterstore") }

func (d *deployment) warehouse() string { return "file://" + filepath.Join(d.work, "warehouse") }

func (d *deployment) loadDemo(ctx context.Context, opt options) error {
	if err := os.MkdirAll(filepath.Join(d.work, "warehouse"), 0o755); err != nil {
		return err
	}
	d.config = filepath.Join(d.work, "meterstore.toml")
	cfg := fmt.Sprintf(`[hot]
url = %q

[cold]
warehouse = %q
namespace = "meterstore"

# A German deployment's zone: foreign clients' naive timestamps and the
# session's TimeZone are read as PostgreSQL reads them there.
[engine]
time_zone = "Europe/Berlin"

[[tables]]
name = "readings_versions"
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
`, d.catalogDSN(), d.warehouse(), analyst, analystPassword, scopedUser, scopedPassword, scopedTenant)
	if err := os.WriteFile(d.config, []byte(cfg), 0o600); err != nil {
		return err
	}
	return d.msqlRun(ctx, os.Stderr, "demo", "--config", d.config, "--no-shell",
		"--malos", strconv.Itoa(opt.malos), "--days", strconv.Itoa(opt.days),
		"--correction-rate", strconv.FormatFloat(opt.correction, 'f', -1, 64))
}

func (d *deployment) msqlRun(ctx context.Context, stdout *os.File, args ...string) error {
	cmd := exec.CommandContext(ctx, d.msql, args...)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	return cmd.Run()
}

// msqlQuery runs one statement through `msql -c` on the deployment and
// returns its CSV rows without the header.
func (d *deployment) msqlQuery(ctx context.Context, sql string) ([][]string, error) {
	cmd := exec.CommandContext(ctx, d.msql, "--config", d.config, "--format", "csv", "--no-provenance", "-c", sql)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("msql -c %q: %w: %s", sql, err, stderr.String())
	}
	return parseCSV(string(out))
}

// msqlOutput runs msql and returns what it printed on stdout and stderr.
func (d *deployment) msqlOutput(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, d.msql, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("msql %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (d *deployment) startServe(ctx context.Context) error {
	var err error
	for _, p := range []*int{&d.pgPort, &d.flight, &d.rest} {
		if *p, err = freePort(); err != nil {
			return err
		}
	}
	d.serveLog = filepath.Join(d.work, "serve.log")
	logf, err := os.Create(d.serveLog)
	if err != nil {
		return err
	}
	defer logf.Close()
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	d.serve = exec.Command(d.msql, "serve", "--config", d.config,
		"--pgwire", addr(d.pgPort), "--flight", addr(d.flight), "--iceberg-rest", addr(d.rest))
	d.serve.Stdout, d.serve.Stderr = logf, logf
	d.serve.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := d.serve.Start(); err != nil {
		return err
	}
	d.serveDone = make(chan error, 1)
	go func() { d.serveDone <- d.serve.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(fmt.Sprintf("http://%s/readyz", addr(d.rest)))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-d.serveDone:
			d.serve = nil
			log, _ := os.ReadFile(d.serveLog)
			return fmt.Errorf("msql serve exited: %v\n%s", err, log)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("msql serve not ready after 2 minutes (see " + d.serveLog + ")")
		}
	}
}

// environment is what the programs read.
func (d *deployment) environment(opt options) []string {
	return []string{
		"INTEROP_EXPECTED=" + d.expected,
		"INTEROP_WORK=" + d.work,
		"INTEROP_MSQL=" + d.msql,
		"INTEROP_CONFIG=" + d.config,
		"INTEROP_PG_HOST=127.0.0.1",
		"INTEROP_PG_PORT=" + strconv.Itoa(d.pgPort),
		"INTEROP_FLIGHT_PORT=" + strconv.Itoa(d.flight),
		"INTEROP_REST_URI=http://127.0.0.1:" + strconv.Itoa(d.rest),
		"INTEROP_USER=" + analyst,
		"INTEROP_PASSWORD=" + analystPassword,
		"INTEROP_SCOPED_USER=" + scopedUser,
		"INTEROP_SCOPED_PASSWORD=" + scopedPassword,
		"INTEROP_SCOPED_TENANT=" + scopedTenant,
		"INTEROP_CATALOG_DSN=" + d.catalogDSN(),
		"INTEROP_CATALOG_NAME=meterstore",
		"INTEROP_NAMESPACE=meterstore",
		"INTEROP_WAREHOUSE=" + d.warehouse(),
		"INTEROP_SPEC=" + filepath.Join(d.root, "interop", "rest-catalog-open-api.yaml"),
		"INTEROP_ICEBERG_SPARK_JAR=" + d.sparkJar,
	}
}

func (d *deployment) tearDown() {
	if d.serve != nil && d.serve.Process != nil {
		_ = d.serve.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.serveDone:
		case <-time.After(20 * time.Second):
			_ = d.serve.Process.Kill()
			<-d.serveDone
		}
	}
	if d.pg != nil {
		_ = d.pg.Stop()
	}
	if d.removeWork && d.ok {
		_ = os.RemoveAll(d.work)
	} else if d.work != "" {
		fmt.Fprintln(os.Stderr, "interop: kept", d.work, "(serve.log, pg/server.log)")
	}
}
