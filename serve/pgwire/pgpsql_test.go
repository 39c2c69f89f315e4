package pgwire_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// psqlBinary is PostgreSQL 15's psql, the client these tests speak for.
func psqlBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/lib/postgresql/15/bin/psql", "psql"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("psql not installed")
	return ""
}

// psqlRunner runs psql against addr as user; env adds variables (PGOPTIONS).
type psqlRunner struct {
	bin, addr  string
	user, pass string
	dir        string
}

func newPsql(t *testing.T, addr, user, pass string) *psqlRunner {
	return &psqlRunner{bin: psqlBinary(t), addr: addr, user: user, pass: pass, dir: t.TempDir()}
}

// run runs psql with args and returns its output (stdout and stderr) and
// whether it exited 0.
func (r *psqlRunner) run(t *testing.T, env []string, args ...string) (string, bool) {
	t.Helper()
	host, port, _ := strings.Cut(r.addr, ":")
	cmd := exec.Command(r.bin, append([]string{"-X", "-h", host, "-p", port, "-U", r.user, "-d", "meterstore"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "PGPASSWORD="+r.pass, "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// ok runs psql and fails the test if psql fails.
func (r *psqlRunner) ok(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, ok := r.run(t, env, args...)
	if !ok {
		t.Fatalf("psql %q failed:\n%s", args, out)
	}
	return out
}

// file is a path in the runner's directory.
func (r *psqlRunner) file(name string) string { return filepath.Join(r.dir, name) }
