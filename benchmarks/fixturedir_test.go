package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meterstore/meterstore/catalog"
)

// A fixture directory's record brings back the fixture it was saved from and
// the phases done, and refuses a run asking for another fixture, naming both.
func TestFixtureDirRecordReopensAndRefusesOtherFlags(t *testing.T) {
	o := options{malos: 2, days: 40, seed: 1, corrections: 0.01, cleanDays: 30, compacted: true, fixtureDir: t.TempDir()}
	bf, err := openBuilt(o)
	if err != nil {
		t.Fatal(err)
	}
	if bf.fixture(false) != nil {
		t.Fatal("an empty directory gave a fixture")
	}
	first := time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC)
	fx := &fixture{rows: 15456, coldRows: 12688, hotRows: 2768, windows: 34, first: first, last: first.Add(41 * 24 * time.Hour),
		watermark: first.Add(34 * 24 * time.Hour), now: first.Add(41*24*time.Hour + time.Hour), cleanUntil: first.Add(30 * 24 * time.Hour),
		malos: []string{"a", "b"}}
	bf.record(fx)
	bf.Done[fixturePhase] = phaseDone{Took: "1s", Results: []savedResult{{Measure: "ingest", Figure: "0.07×"}}}
	if err := bf.save(); err != nil {
		t.Fatal(err)
	}
	again, err := openBuilt(o)
	if err != nil {
		t.Fatal(err)
	}
	got := again.fixture(false)
	if got == nil || got.rows != fx.rows || got.coldRows != fx.coldRows || got.windows != fx.windows || !got.watermark.Equal(fx.watermark) ||
		!got.now.Equal(fx.now) || !got.cleanUntil.Equal(fx.cleanUntil) || !slices.Equal(got.malos, fx.malos) {
		t.Fatalf("reopened fixture %+v, saved %+v", got, fx)
	}
	if r := again.Done[fixturePhase].Results; len(r) != 1 || r[0].Figure != "0.07×" {
		t.Fatalf("reopened phase results %+v", r)
	}
	other := o
	other.malos = 3
	_, err = openBuilt(other)
	if err == nil || !strings.Contains(err.Error(), "-malos 2 ") || !strings.Contains(err.Error(), "-malos 3 ") {
		t.Fatalf("a run with -malos 3 on a -malos 2 directory: %v, want a refusal naming both", err)
	}
}

// A directory holding files but no record (a build stopped while loading the
// fixture) is refused rather than loaded into.
func TestFixtureDirWithoutRecordIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stray"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openBuilt(options{fixtureDir: dir}); err == nil || !strings.Contains(err.Error(), "no fixture.json") {
		t.Fatalf("a non-empty directory without fixture.json: %v, want a refusal", err)
	}
}

// A fixture directory whose cold files were written by another layout than
// this build's — or before layouts were recorded — says so, naming both, in
// the fixture the measures and the results' header get; one written by this
// build says nothing.
func TestFixtureDirTellsAColdLayoutThisBuildNoLongerWrites(t *testing.T) {
	o := options{malos: 2, days: 40, seed: 1, corrections: 0.01, cleanDays: 30, compacted: true, fixtureDir: t.TempDir()}
	bf, err := openBuilt(o)
	if err != nil {
		t.Fatal(err)
	}
	bf.record(&fixture{rows: 1, malos: []string{"a"}})
	bf.Done[fixturePhase] = phaseDone{Took: "1s"}
	if err := bf.save(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ saved, want string }{
		{catalog.DataFileLayout, ""},
		{"decimal(18,6) FIXED_LEN_BYTE_ARRAY", `laid out as "decimal(18,6) FIXED_LEN_BYTE_ARRAY", this build writes "` + catalog.DataFileLayout + `"`},
		{"", "not recorded"},
	} {
		bf.ColdLayout = tc.saved
		if err := bf.save(); err != nil {
			t.Fatal(err)
		}
		again, err := openBuilt(o)
		if err != nil {
			t.Fatal(err)
		}
		got := again.fixture(false).staleLayout
		if tc.want == "" && got != "" || tc.want != "" && (!strings.Contains(got, tc.want) || !strings.Contains(got, "rebuild")) {
			t.Errorf("saved layout %q: the fixture says %q, want %q", tc.saved, got, tc.want)
		}
	}
}
