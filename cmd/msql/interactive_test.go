package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

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
	return startTermCmd(t, cmd)
}

// startTermCmd runs cmd on a 40×160 pseudo-terminal.
func startTermCmd(t *testing.T, cmd *exec.Cmd) *ptyTerm {
	t.Helper()
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
	tm.expectMatch(regexp.MustCompile(regexp.QuoteMeta(want)), timeout)
}

// expectMatch waits until re matches the output after the last match and
// returns its submatches.
func (tm *ptyTerm) expectMatch(re *regexp.Regexp, timeout time.Duration) []string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		tm.mu.Lock()
		out := tm.out.String()
		tm.mu.Unlock()
		if loc := re.FindStringSubmatchIndex(out[tm.seen:]); loc != nil {
			m := re.FindStringSubmatch(out[tm.seen:])
			tm.seen += loc[1]
			return m
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out after %s waiting for %s; output after the last match:\n%s", timeout, re, out[tm.seen:])
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

	// Dot-commands complete too (.timez has one completion, .timezone; .tim has
	// two since .timezone, so .timer is typed whole).
	tm.send(".timez\t\r")
	tm.expect("UTC", 10*time.Second)
	tm.send(".timer on\r")
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

// .plot in a terminal draws across the terminal's width, in colour, with the
// time axis on Berlin's clock.
func TestInteractivePlot(t *testing.T) {
	tm := startTerm(t, t.TempDir(), "--scratch")
	tm.expect("msql> ", 30*time.Second)
	tm.send(`.plot SELECT ts AS "from", 0.1 + 0.05 * sin(epoch(ts) / 3600 * pi() / 6) AS value ` +
		`FROM generate_series(TIMESTAMPTZ '2025-10-25 22:00:00+00', TIMESTAMPTZ '2025-10-26 22:45:00+00', INTERVAL 15 MINUTE) g(ts)` + "\r")
	tm.expect("\x1b[", 20*time.Second) // the series in colour
	axis := tm.expectMatch(regexp.MustCompile(`\r\n( *└┬[─┬]+)\r\n`), 10*time.Second)[1]
	width := utf8.RuneCountInString(axis)
	require.Greater(t, width, 130, "the plot spans the 160-column terminal (off a terminal it is 100 wide): %q", axis)
	require.LessOrEqual(t, width, 160, axis)
	tm.expect("06:00", 5*time.Second)
	tm.expect("value by from (Europe/Berlin)", 5*time.Second)
	tm.send("SELECT 'after' AS state;\r")
	tm.expect("(1 row)", 10*time.Second)
	tm.exit()
}

// A statement running past two seconds shows DuckDB's progress as a bar,
// redrawn in place on the terminal; Ctrl-C cancels it and the line is
// cleared. Off a terminal nothing is drawn: no carriage return, no bar.
func TestInteractiveProgressBar(t *testing.T) {
	// A scan DuckDB can estimate (a table's rows), slow per row.
	const table = `CREATE TABLE t AS SELECT range AS x FROM range(30000000);`
	const long = `SELECT max(md5(md5(md5(x::VARCHAR)))) FROM t;`
	tm := startTerm(t, t.TempDir(), "--scratch")
	tm.expect("msql> ", 30*time.Second)
	tm.send(table + "\r")
	tm.expect("msql> ", 60*time.Second)
	tm.send(long + "\r")
	tm.expectMatch(regexp.MustCompile(`\r\x1b\[2K *[1-9]\d*% ▕[ █▏▎▍▌▋▊▉]{40}▏ \d+\.\ds · Ctrl-C cancels`), 60*time.Second)
	tm.send("\x03")
	tm.expect("\r\x1b[2K", 10*time.Second) // the bar is cleared
	tm.expect("statement cancelled", 20*time.Second)
	tm.send("SELECT 'after' AS state;\r")
	tm.expect("(1 row)", 10*time.Second)
	tm.exit()

	cmd := exec.Command(msqlBin, "--scratch")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "MSQL_HOME="+filepath.Join(home, "msql"))
	cmd.Stdin = strings.NewReader(table + "\n" + long + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	time.Sleep(progressAfter + 3*time.Second)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	_ = cmd.Wait()
	require.NotContains(t, out.String(), "\r", "piped: %q", out.String())
	require.NotContains(t, out.String(), "Ctrl-C cancels", "piped: %q", out.String())
}

// A day bound with .param set is a parameter of the statement, and prunes
// files as the literal day does: EXPLAIN keeps some of the files and reads
// no hot partition, and the count is the literal's.
func TestInteractiveParamPrunesByDay(t *testing.T) {
	dep := tinyDemo(t)
	r := msql(t, "", append(dep, "--format", "csv", "-c", `SELECT min(balancing_day) FROM readings`)...)
	require.Equal(t, 0, r.code, r.stderr)
	day := strings.TrimSpace(strings.Split(r.stdout, "\n")[1])
	r = msql(t, "", append(dep, "--format", "csv", "--no-provenance", "-c", `SELECT count(*) FROM readings WHERE balancing_day = DATE '`+day+`'`)...)
	require.Equal(t, 0, r.code, r.stderr)
	count := strings.TrimSpace(strings.Split(r.stdout, "\n")[1])
	require.NotEqual(t, "0", count)

	tm := startTerm(t, t.TempDir(), dep...)
	tm.expect("msql> ", 60*time.Second)
	tm.send(".param set day " + day + "\r")
	tm.expect("msql> ", 10*time.Second)
	tm.send(".explain SELECT count(*) FROM readings WHERE balancing_day = $day;\r")
	plan := tm.expectMatch(regexp.MustCompile(`MeterStore plan\r\n((?:[^\r]*\r\n)*?)provenance: `), 30*time.Second)[1]
	require.Regexp(t, `\d+ files kept, [1-9]\d* pruned by statistics`, plan)
	require.NotContains(t, plan, "  hot:", "the day lies below the watermark")
	tm.send("SELECT count(*) AS n FROM readings WHERE balancing_day = $day;\r")
	tm.expect(" "+count+" ", 30*time.Second)
	tm.expect("(1 row)", 5*time.Second)
	tm.exit()
}

// Started by a program that does no job control (go tool task demo runs msql
// from go-task, which exits on the third Ctrl-C and leaves msql orphaned on
// the terminal), msql takes the terminal's foreground: the Ctrl-C that
// cancels a statement reaches msql only, not the program that started it.
func TestCtrlCReachesOnlyMsql(t *testing.T) {
	home := t.TempDir()
	script := `trap 'echo STARTER-GOT-SIGINT' INT; "$0" --scratch; echo "starter: msql exited $?"`
	cmd := exec.Command("sh", "-c", script, msqlBin)
	cmd.Env = append(os.Environ(), "HOME="+home, "MSQL_HOME="+filepath.Join(home, "msql"), "TERM=xterm", "PAGER=cat")
	tm := startTermCmd(t, cmd)
	tm.expect("msql> ", 30*time.Second)
	for i := 0; i < 3; i++ {
		tm.send("SELECT sum(a.range * b.range) FROM range(10000000) a, range(10000000) b;\r")
		time.Sleep(1500 * time.Millisecond)
		tm.send("\x03")
		tm.expect("statement cancelled", 20*time.Second)
		tm.expect("msql> ", 5*time.Second)
	}
	tm.send("\x04")
	tm.expect("starter: msql exited 0", 30*time.Second)
	<-tm.done
	tm.mu.Lock()
	out := tm.out.String()
	tm.mu.Unlock()
	if i := strings.LastIndex(out, "msql> "); i >= 0 {
		out = out[i:] // what the starter printed after msql: the trap's line, if Ctrl-C reached it
	}
	require.NotContains(t, out, "STARTER-GOT-SIGINT", "Ctrl-C reached the program that started msql")
}
