// Command harness stands up the deployment the interop suite reads — a private
// PostgreSQL, a file:// Iceberg warehouse, the demo portfolio loaded by
// `msql demo` (two tenants, corrections, late corrections below the
// watermark) and `msql serve` with pgwire, Flight SQL and the Iceberg REST
// façade — computes what the foreign clients must find from `msql` on the same
// deployment and from the testkit oracle, then runs the Python and Java
// programs of interop/ against it and tears everything down.
//
//	go run ./interop/harness                 # everything (go tool task interop)
//	go run ./interop/harness -suites python  # one suite
//	go run ./interop/harness -keep           # set up, print the environment, wait for Ctrl-C
//
// The programs receive the deployment through INTEROP_* environment variables
// and the expected values as a JSON file (INTEROP_EXPECTED).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(1)
	}
}

func run() error {
	opt, err := parseOptions(os.Args[1:])
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	d, err := setUp(ctx, opt)
	if d != nil {
		defer d.tearDown()
	}
	if err != nil {
		return err
	}
	env := d.environment(opt)
	if opt.keep {
		for _, kv := range env {
			fmt.Println("export " + kv)
		}
		fmt.Fprintln(os.Stderr, "interop: deployment up; Ctrl-C tears it down")
		<-ctx.Done()
		return nil
	}
	var failed []string
	for _, s := range opt.suites {
		start := time.Now()
		err := runSuite(ctx, s, opt, env)
		fmt.Fprintf(os.Stderr, "interop: suite %s %s in %s\n", s, verdict(err), time.Since(start).Round(time.Second))
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", s, err))
		}
	}
	if len(failed) > 0 {
		return errors.New("failed suites: " + strings.Join(failed, ", "))
	}
	d.ok = true
	return nil
}

func verdict(err error) string {
	if err != nil {
		return "FAILED"
	}
	return "passed"
}

// repoRoot is the module root: the harness runs from it (go run ./interop/harness).
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod above %s: run the harness from the repository", wd)
		}
	}
}
