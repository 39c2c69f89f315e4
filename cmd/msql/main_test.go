package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the actual output")

// msqlBin is the binary under test, built once per test run.
var msqlBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "msql-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	msqlBin = filepath.Join(dir, "msql")
	build := exec.Command("go", "build", "-o", msqlBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build msql:", err)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.Shutdown()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// msql runs the binary with stdin and args, in a private MSQL_HOME and HOME.
func msql(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return msqlEnv(t, nil, stdin, args...)
}

func msqlEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, msqlBin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "MSQL_HOME="+filepath.Join(home, "msql"), "HOME="+home, "PAGER=cat")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

// golden compares got with testdata/name.golden (rewritten under -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./cmd/msql -update")
	require.Equal(t, string(want), got, "output differs from %s (go test ./cmd/msql -run %s -update to accept)", path, t.Name())
}

// deploymentArgs returns --dsn and --warehouse of a fresh database and warehouse.
func deploymentArgs(t *testing.T) []string {
	t.Helper()
	return []string{"--dsn", pgtest.Database(t), "--warehouse", "file://" + t.TempDir()}
}

// tinyDemo loads a small demo portfolio into a fresh deployment and returns its flags.
func tinyDemo(t *testing.T) []string {
	t.Helper()
	dep := deploymentArgs(t)
	r := msql(t, "", append([]string{"demo", "--no-shell", "--malos", "5", "--days", "10", "--minute-share", "0", "--correction-rate", "0.3"}, dep...)...)
	require.Equal(t, 0, r.code, "demo failed: %s", r.stderr)
	return dep
}

// tinyDemoTable is tinyDemo and its table, open in this process (closed when
// the test ends) for a test to change what msql then finds.
func tinyDemoTable(t *testing.T) ([]string, *store.Table) {
	t.Helper()
	dep := tinyDemo(t)
	d, err := (&deployFlags{dsn: dep[1], warehouse: dep[3]}).open(context.Background(), stdio{err: os.Stderr})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return dep, d.store.Tables()[0]
}
