package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meterstore/meterstore/catalog"
)

// builtFixture is what a fixture directory (-fixture-dir) records next to
// the fixture it holds — PostgreSQL's data directory, the warehouse,
// DuckLake's files: the fixture's metadata the measures need, and which build
// phases are done with what they measured. The peers' build at 35 M rows
// takes about an hour, longer on a loaded machine; a second run with the same
// flags skips what is done, so the questions can be timed on a quiet machine.
type builtFixture struct {
	dir                              string
	Flags                            string // the fixture's flags: a run with others refuses the directory
	Rows, ColdRows, HotRows, Windows int
	First, Last, Watermark, Now      time.Time
	CleanUntil                       time.Time
	MaLos                            []string
	// ColdLayout is the catalog.DataFileLayout of the build that wrote the
	// fixture's cold files ("" in a record from before it was recorded).
	ColdLayout string
	Done       map[string]phaseDone
}

// phaseDone is one finished build phase.
type phaseDone struct {
	Finished time.Time
	Took     string
	Load     string // the load average when it finished
	Results  []savedResult
}

type savedResult struct {
	Measure, Against, Target, Figure string
	Met                              bool
}

const fixturePhase = "fixture and hot week"

// fixtureFlags are the flags that decide what a fixture directory holds.
func fixtureFlags(o options) string {
	return fmt.Sprintf("-malos %d -days %d -seed %d -corrections %g -clean-days %d -reference=%v -compacted=%v",
		o.malos, o.days, o.seed, o.corrections, o.cleanDays, o.reference, o.compacted)
}

func (bf *builtFixture) path() string { return filepath.Join(bf.dir, "fixture.json") }

// openBuilt reads the record of the fixture directory o names, or starts one
// for an empty or missing directory. A directory built with other flags, or
// holding files but no record (a build stopped while loading the fixture),
// is refused.
func openBuilt(o options) (*builtFixture, error) {
	bf := &builtFixture{dir: o.fixtureDir, Flags: fixtureFlags(o), Done: map[string]phaseDone{}}
	data, err := os.ReadFile(bf.path())
	if errors.Is(err, fs.ErrNotExist) {
		if entries, _ := os.ReadDir(o.fixtureDir); len(entries) > 0 {
			return nil, fmt.Errorf("-fixture-dir %s: holds files but no fixture.json (a build stopped while loading the fixture, or not a fixture directory): remove it or name an empty directory", o.fixtureDir)
		}
		return bf, nil
	}
	if err != nil {
		return nil, err
	}
	var saved builtFixture
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("-fixture-dir %s: %w", bf.path(), err)
	}
	if saved.Flags != bf.Flags {
		return nil, fmt.Errorf("-fixture-dir %s holds the fixture of %q, but this run asks for %q: run with the directory's flags or name another directory", o.fixtureDir, saved.Flags, bf.Flags)
	}
	saved.dir = o.fixtureDir
	if stale := saved.staleLayout(); stale != "" {
		logf("-fixture-dir %s: %s", o.fixtureDir, stale)
	}
	return &saved, nil
}

// staleLayout says how the fixture's cold files differ from those this build
// writes, and what to do; "" when they do not.
func (bf *builtFixture) staleLayout() string {
	if bf.ColdLayout == catalog.DataFileLayout {
		return ""
	}
	was := bf.ColdLayout
	if was == "" {
		was = "not recorded: built before layouts were"
	}
	return fmt.Sprintf("its cold files are laid out as %q, this build writes %q: the timings measure files this build no longer writes (rebuild the directory to measure the current layout)", was, catalog.DataFileLayout)
}

// fixture is the recorded fixture, or nil before its phase is done; its cold
// files are listed from the catalog once the store is open.
func (bf *builtFixture) fixture(reference bool) *fixture {
	if bf == nil {
		return nil
	}
	if _, ok := bf.Done[fixturePhase]; !ok {
		return nil
	}
	return &fixture{rows: bf.Rows, coldRows: bf.ColdRows, hotRows: bf.HotRows, windows: bf.Windows, first: bf.First, last: bf.Last,
		watermark: bf.Watermark, now: bf.Now, cleanUntil: bf.CleanUntil, malos: bf.MaLos, reference: reference, staleLayout: bf.staleLayout()}
}

func (bf *builtFixture) record(fx *fixture) {
	bf.Rows, bf.ColdRows, bf.HotRows, bf.Windows = fx.rows, fx.coldRows, fx.hotRows, fx.windows
	bf.First, bf.Last, bf.Watermark, bf.Now, bf.CleanUntil, bf.MaLos = fx.first, fx.last, fx.watermark, fx.now, fx.cleanUntil, fx.malos
	bf.ColdLayout = catalog.DataFileLayout
}

func (bf *builtFixture) save() error {
	data, err := json.MarshalIndent(bf, "", "  ")
	if err != nil {
		return err
	}
	tmp := bf.path() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, bf.path())
}

// phase runs one build phase, unless the fixture directory records it done:
// then it returns what the phase measured when it ran (skipped is true).
// Without a fixture directory it just runs.
func (b *bench) phase(name string, run func() ([]result, error)) (rs []result, skipped bool, err error) {
	bf := b.built
	if bf == nil {
		rs, err := run()
		return rs, false, err
	}
	if done, ok := bf.Done[name]; ok {
		logf("build: %s: done already (%s at load %s), skipped", name, done.Took, done.Load)
		for _, r := range done.Results {
			rs = append(rs, result{measure: r.Measure, against: r.Against, target: r.Target, figure: r.Figure, met: r.Met})
		}
		return rs, true, nil
	}
	logf("build: %s (load %s)", name, loadAverage())
	start := time.Now()
	rs, err = run()
	if err != nil {
		return nil, false, fmt.Errorf("build phase %s: %w", name, err)
	}
	done := phaseDone{Finished: time.Now().UTC(), Took: time.Since(start).Round(time.Second).String(), Load: loadAverage()}
	for i := range rs {
		rs[i].figure += fmt.Sprintf(" (measured while building the fixture, load %s)", done.Load)
		done.Results = append(done.Results, savedResult{rs[i].measure, rs[i].against, rs[i].target, rs[i].figure, rs[i].met})
	}
	if name == fixturePhase {
		bf.record(b.fx)
	}
	bf.Done[name] = done
	logf("build: %s: done in %s (load %s)", name, done.Took, done.Load)
	return rs, false, bf.save()
}

// loadAverage is the 1, 5 and 15 minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}
