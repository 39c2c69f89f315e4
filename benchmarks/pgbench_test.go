package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// A target's CPU is its server process's own: it grows while that process
// computes, and a target without one measures none.
func TestPgbenchTargetCPUIsItsServers(t *testing.T) {
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Process.Kill(); _ = busy.Wait() }()
	target := pgbenchTarget{name: "busy", pid: busy.Process.Pid}
	before, err := target.cpuTicks()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		after, err := target.cpuTicks()
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a busy server's CPU stayed at %d ticks for 10 s", before)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ticks, err := (pgbenchTarget{name: "PostgreSQL"}).cpuTicks(); ticks != 0 || err != nil {
		t.Fatalf("a target without a server process measured %d ticks (%v)", ticks, err)
	}
}

// With a base build the new and the base build take turns going first, and
// PostgreSQL runs after both; without one the order is msql serve, then
// PostgreSQL.
func TestSideOrderAlternatesTheBuilds(t *testing.T) {
	if got := sideOrder(2, 1); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("two sides: %v", got)
	}
	if got := sideOrder(3, 0); !slices.Equal(got, []int{0, 2, 1}) {
		t.Fatalf("three sides, pair 0: %v", got)
	}
	if got := sideOrder(3, 1); !slices.Equal(got, []int{2, 0, 1}) {
		t.Fatalf("three sides, pair 1: %v", got)
	}
}

// The A/B row gives the ratios of CPU per transaction and p99, and is met
// only when the new build spends less CPU per transaction without errors.
func TestPgbenchBaseResultRatios(t *testing.T) {
	q := loadQuestions[1]
	ours := pgbenchRun{tps: 50, txns: 500, p50: 10 * time.Millisecond, p99: 30 * time.Millisecond, cpuPerTxn: 3 * time.Millisecond}
	base := pgbenchRun{tps: 40, txns: 400, p50: 12 * time.Millisecond, p99: 40 * time.Millisecond, cpuPerTxn: 4 * time.Millisecond}
	r := pgbenchBaseResult(q, 4, ours, base)
	if !r.met || !strings.Contains(r.figure, "CPU per transaction 0.75×, p99 0.75×") {
		t.Fatalf("cheaper build: met %v, %q", r.met, r.figure)
	}
	if r := pgbenchBaseResult(q, 4, base, ours); r.met || !strings.Contains(r.figure, "CPU per transaction 1.33×") {
		t.Fatalf("dearer build: met %v, %q", r.met, r.figure)
	}
	ours.failed = 1
	if r := pgbenchBaseResult(q, 4, ours, base); r.met {
		t.Fatalf("a failed transaction met the target: %q", r.figure)
	}
}

// A process's resident memory is its anonymous and file-backed parts (and
// shared memory, none here): the parts are read, not left at zero.
func TestResidentMemoryHasItsParts(t *testing.T) {
	m, err := residentMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.anon <= 0 || m.file <= 0 || m.anon+m.file > m.rss {
		t.Fatalf("resident %d kB, anonymous %d kB, file-backed %d kB: the parts should be positive and within the whole", m.rss, m.anon, m.file)
	}
	if _, err := residentMemory(-1); err == nil {
		t.Fatal("a process that does not exist has no resident memory to read")
	}
}

// The heap readings come from go tool pprof -top as it prints them: the
// total, then the holders largest first; heapNote names the largest reading.
func TestParsePprofTop(t *testing.T) {
	out := `File: msql
Type: inuse_space
Showing nodes accounting for 2980kB, 30.92% of 9638.41kB total
Showing top 3 nodes out of 165
      flat  flat%   sum%        cum   cum%
 1951.87kB 20.25% 20.25%  1951.87kB 20.25%  github.com/meterstore/meterstore/udf.newHourMemo
  514.63kB  5.34% 25.59%   514.63kB  5.34%  golang.org/x/net/http2/hpack.init
  513.50kB  5.33% 30.92%   513.50kB  5.33%  regexp/syntax.(*compiler).inst
`
	r := parsePprofTop(out)
	if r.total != "9638.41kB" {
		t.Fatalf("total %q", r.total)
	}
	want := []string{"1951.87kB github.com/meterstore/meterstore/udf.newHourMemo", "514.63kB golang.org/x/net/http2/hpack.init", "513.50kB regexp/syntax.(*compiler).inst"}
	if !slices.Equal(r.top, want) {
		t.Fatalf("top %q", r.top)
	}
	if heapBytes("38.34MB") <= heapBytes("9638.41kB") || heapBytes("512B") != 512 {
		t.Fatal("heapBytes misreads pprof's units")
	}
	p := &serveProcess{heaps: []heapReading{
		{after: "a", total: "9.5MB", top: []string{"1MB x"}},
		{after: "b", total: "38.3MB", top: []string{"26MB y"}},
		{after: "c", total: "9.4MB", top: []string{"1MB z"}},
	}}
	note := p.heapNote()
	for _, s := range []string{"after a 9.5MB; b 38.3MB; c 9.4MB", "Largest holders after b: 26MB y", "at the end: 1MB z"} {
		if !strings.Contains(note, s) {
			t.Fatalf("note %q lacks %q", note, s)
		}
	}
}
