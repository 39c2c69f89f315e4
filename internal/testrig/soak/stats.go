package soak

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// stats collects what the soak saw; every method is safe for concurrent use.
type stats struct {
	mu        sync.Mutex
	ops       map[string]int
	retried   map[string]int // deliveries that needed more than one attempt, by kind
	writeErrs map[string]int
	reads     map[string][]time.Duration
	readErrs  map[string]int
	idle      map[string][]time.Duration
	failures  []string
	faults    []fault
	errSample map[string]string
}

// fault is one injected fault and how long the deployment took to recover.
type fault struct {
	kind     string
	at       time.Duration // since the soak started
	recovery time.Duration
	note     string // what recovery measured, or what the fault did
	err      error
}

func newStats() *stats {
	return &stats{ops: map[string]int{}, retried: map[string]int{}, writeErrs: map[string]int{}, reads: map[string][]time.Duration{},
		readErrs: map[string]int{}, idle: map[string][]time.Duration{}, errSample: map[string]string{}}
}

func (s *stats) op(kind string, retries int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops[kind]++
	if retries > 0 {
		s.retried[kind]++
	}
}

func (s *stats) writeError(kind string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := kind + ": " + errClass(err)
	s.writeErrs[k]++
	s.errSample[k] = err.Error()
}

func (s *stats) read(kind string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads[kind] = append(s.reads[kind], d)
	s.ops["read: "+kind]++
}

func (s *stats) idleRead(kind string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle[kind] = append(s.idle[kind], d)
}

func (s *stats) readError(reader, kind string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := kind + ": " + errClass(err)
	s.readErrs[k]++
	s.errSample[k] = err.Error()
}

func (s *stats) fail(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) < 50 {
		s.failures = append(s.failures, msg)
	}
}

func (s *stats) addFault(f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

func (s *stats) faultList() []fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.faults)
}

func (s *stats) failed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failures)
}

// errClass is an error's first words, enough to group errors by cause in
// the summary without every instance's details.
func errClass(err error) string {
	msg := err.Error()
	if i := strings.IndexAny(msg, "\n"); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 90 {
		msg = msg[:90] + "…"
	}
	return msg
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// summary writes the report in Markdown.
func (s *stats) summary(w io.Writer, o Options, elapsed time.Duration, d *deployment, checks []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(w, "### soak seed %#x, %s (ran %s)\n\n", o.Seed, o.Duration, elapsed.Round(time.Second))
	if d.mounted {
		fmt.Fprintf(w, "Warehouse on a %d MiB tmpfs mounted by the soak.\n\n", warehouseBytes>>20)
	} else {
		fmt.Fprintf(w, "Warehouse on the work directory's filesystem, no full-disk fault: mount tmpfs refused: %v.\n\n", d.mountErr)
	}
	fmt.Fprintln(w, "| operation | count | per second | needed a retry |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, k := range sortedKeys(s.ops) {
		fmt.Fprintf(w, "| %s | %d | %.1f | %d |\n", k, s.ops[k], float64(s.ops[k])/elapsed.Seconds(), s.retried[k])
	}
	fmt.Fprintln(w, "\n| query | p50 under load | p99 under load | p50 idle | p99 idle |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, k := range sortedKeys(s.reads) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", k, ms(percentile(s.reads[k], 0.5)), ms(percentile(s.reads[k], 0.99)),
			ms(percentile(s.idle[k], 0.5)), ms(percentile(s.idle[k], 0.99)))
	}
	fmt.Fprintln(w, "\n| fault | at | recovered in | | error |")
	fmt.Fprintln(w, "|---|---:|---:|---|---|")
	for _, f := range s.faults {
		e := ""
		if f.err != nil {
			e = f.err.Error()
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", f.kind, f.at.Round(time.Second), ms(f.recovery), f.note, e)
	}
	fmt.Fprintln(w, "\nErrors the clients got (each retried; none is a wrong answer):")
	fmt.Fprintln(w)
	for _, m := range []map[string]int{s.writeErrs, s.readErrs} {
		for _, k := range sortedKeys(m) {
			fmt.Fprintf(w, "- %d × %s\n", m[k], k)
		}
	}
	fmt.Fprintln(w, "\nEnd checks:")
	fmt.Fprintln(w)
	for _, c := range checks {
		fmt.Fprintf(w, "- %s\n", c)
	}
	if len(s.failures) > 0 {
		fmt.Fprintln(w, "\nFAILURES:")
		for _, f := range s.failures {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
	fmt.Fprintln(w)
}

func ms(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
