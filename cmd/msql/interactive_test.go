package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// ptyTerm is msql running under a pseudo-terminal.
type ptyTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	f    *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // output before this offset has been matched already
	done chan struct{}
}

// startTerm runs msql on a 40×160 pseudo-terminal with home as its HOME and MSQL_HOME.
func startTerm(t *testing.T, home string, args ...string) *ptyTerm {
	t.Helper()
	cmd := exec.Command(msqlBin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "MSQL_HOME="+filepath.Join(home, "msql"), "TERM=xterm", "PAGER=cat")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	require.NoError(t, err)
	tm := &ptyTerm{t: t, cmd: cmd, f: f, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
	})
	return tm
}

func (tm *ptyTerm) send(s string) {
	tm.t.Helper()
	_, err := tm.f.Write([]byte(s))
	require.NoError(tm.t, err)
}

// expect waits until want appears in the output after the last match.
func (tm *ptyTerm) expect(want string, timeout time.Duration) {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		tm.mu.Lock()
		out := tm.out.String()
		tm.mu.Unlock()
		if i := strings.Index(out[tm.seen:], want); i >= 0 {
			tm.seen += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out after %s waiting for %q; output after the last match:\n%s", timeout, want, out[tm.seen:])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exit waits for the prompt that follows the last result, sends Ctrl-D and
// waits for msql to end with status 0. Callers expect "(1 row)" first, because
// a value they typed also appears in the echo of their typing. The prompt comes
// first because readline prints it only after it has put the terminal in raw
// mode: a Ctrl-D typed before that reaches the kernel's canonical line
// discipline, which turns an end-of-file on an empty line into a NUL byte once
// raw mode begins, and readline never sees the Ctrl-D.
func (tm *ptyTerm) exit() {
	tm.t.Helper()
	tm.expect("msql> ", 10*time.Second)
	tm.send("\x04")
	select {
	case <-tm.done:
	case <-time.After(30 * time.Second):
		tm.mu.Lock()
		out := tm.out.String()
		tm.mu.Unlock()
		tm.t.Fatalf("msql did not exit on Ctrl-D; output after the last match:\n%s", out[tm.seen:])
	}
	require.NoError(tm.t, tm.cmd.Wait())
}

func TestInteractiveMultiLineAndCompletion(t *testing.T) {
	tm := startTerm(t, t.TempDir(), "--scratch")
	tm.expect("msql> ", 30*time.Second)

	// A statement over three lines, with a ';' inside a string on the way.
	tm.send("SELECT 'a;b' AS s,\r")
	tm.expect("   -> ", 5*time.Second)
	tm.send("  41 + 1\r")
	tm.expect("   -> ", 5*time.Second)
	tm.send("  AS answer;\r")
	tm.expect("a;b", 10*time.Second)
	tm.expect("42", 5*time.Second)
	tm.expect("(1 row)", 5*time.Second)

	// Tab completes a metering function (lower case kept) and a keyword.
	tm.send("sel\t 1 AS one, meter_loc\t(TIMESTAMPTZ '2026-03-29 12:00:00+00') AS day;\r")
	tm.expect("select", 5*time.Second)
	tm.expect("meter_local_day", 5*time.Second)
	tm.expect("2026-03-29", 10*time.Second)

	// Dot-commands complete too.
	tm.send(".tim\t on\r")
	tm.send("SELECT 1 AS x;\r")
	tm.expect("Run Time: ", 10*time.Second)

	// Ctrl-C on a half-typed statement clears it; the shell stays. Typed at
	// the prompt, so readline gets it rather than the kernel's line discipline.
	tm.expect("msql> ", 5*time.Second)
	tm.send("SELECT 'never\x03")
	tm.expect("msql> ", 5*time.Second)
	tm.send("SELECT 'still here' AS s;\r")
	tm.expect("still here", 10*time.Second)
	tm.expect("(1 row)", 5*time.Second)
	tm.exit()
}

// Ctrl-C cancels a running statement and the shell keeps going.
func TestInteractiveCtrlCCancelsQuery(t *testing.T) {
	tm := startTerm(t, t.TempDir(), "--scratch")
	tm.expect("msql> ", 30*time.Second)
	tm.send("SELECT sum(a.range * b.range) FROM range(10000000) a, range(10000000) b;\r")
	time.Sleep(1500 * time.Millisecond)
	start := time.Now()
	tm.send("\x03")
	tm.expect("statement cancelled", 20*time.Second)
	require.Less(t, time.Since(start), 15*time.Second)
	tm.expect("msql> ", 5*time.Second)
	tm.send("SELECT 'after' AS state;\r")
	tm.expect("after", 10*time.Second)
	tm.expect("(1 row)", 5*time.Second)
	tm.exit()
}

// The history is written to MSQL_HOME and read back by the next run: the
// multi-line statement comes back as one entry.
func TestInteractiveHistoryPersists(t *testing.T) {
	home := t.TempDir()
	tm := startTerm(t, home, "--scratch")
	tm.expect("msql> ", 30*time.Second)
	tm.send("SELECT 'remembered'\r")
	tm.expect("   -> ", 5*time.Second)
	tm.send("AS h;\r")
	tm.expect("(1 row)", 10*time.Second)
	tm.exit()

	b, err := os.ReadFile(filepath.Join(home, "msql", "msql_history"))
	require.NoError(t, err)
	require.Contains(t, string(b), "SELECT 'remembered' AS h;")

	tm = startTerm(t, home, "--scratch")
	tm.expect("msql> ", 30*time.Second)
	tm.send("\x1b[A") // up arrow: the previous run's statement
	tm.expect("SELECT 'remembered' AS h;", 5*time.Second)
	tm.send("\r")
	tm.expect("(1 row)", 10*time.Second)
	// Ctrl-R finds it by a fragment. At the prompt: typed earlier, the kernel's
	// line discipline would take Ctrl-R as its own reprint key.
	tm.expect("msql> ", 5*time.Second)
	tm.send("\x12rememb")
	tm.expect("remembered", 5*time.Second)
	tm.send("\r\r")
	tm.expect("(1 row)", 10*time.Second)
	tm.exit()
}
