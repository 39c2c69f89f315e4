package metering

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/stored-form")

// storedForm is the repository-level stored-form corpus: what earlier builds
// wrote. Every build must decode it byte for byte (design.md, "Stored-form
// compatibility").
const storedForm = "../testdata/stored-form"

func golden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	path := filepath.Join(storedForm, name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./metering -run TestStoredForm -update")
	return want
}

func mustSource(t *testing.T) map[string]Source {
	t.Helper()
	op := mustBdew(t, "9910125000002")
	build := []struct {
		file string
		f    func() (Source, error)
	}{
		{"source_mscons.json", func() (Source, error) { return SourceMscons(op, "M1") }},
		{"source_smgw.json", func() (Source, error) { return SourceSMGW("EDNT0012345678") }},
		{"source_manual.json", func() (Source, error) { return SourceManual("j.doe") }},
		{"source_auto_substitute.json", func() (Source, error) {
			return SourceAutoSubstitute(SubstitutionInterpolation, "gap <4h")
		}},
		{"source_virtual_meter.json", func() (Source, error) { return SourceVirtualMeter(VirtualMeterPVSelfConsumption) }},
		{"source_import.json", func() (Source, error) { return SourceImport("legacy-mdm") }},
	}
	out := map[string]Source{}
	for _, b := range build {
		s, err := b.f()
		require.NoError(t, err, b.file)
		out[b.file] = s
	}
	return out
}

func TestStoredFormSource(t *testing.T) {
	wantKinds := map[string]string{
		"source_mscons.json": "MSCONS", "source_smgw.json": "SMGW", "source_manual.json": "MANUAL",
		"source_auto_substitute.json": "AUTO_SUBSTITUTE", "source_virtual_meter.json": "VIRTUAL_METER",
		"source_import.json": "IMPORT",
	}
	for file, src := range mustSource(t) {
		t.Run(file, func(t *testing.T) {
			got, err := json.Marshal(src)
			require.NoError(t, err)
			direct, err := src.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, string(got), string(direct), "json.Marshal and MarshalJSON must agree")
			want := golden(t, file, got)
			require.Equal(t, string(want), string(got))
			require.Equal(t, wantKinds[file], src.Kind())

			var back Source
			require.NoError(t, json.Unmarshal(want, &back))
			require.Equal(t, src, back)
			require.Equal(t, wantKinds[file], back.Kind())
		})
	}
	// The exact MSCONS shape from the brief, and the accessors.
	s := mustSource(t)["source_mscons.json"]
	b, _ := json.Marshal(s)
	require.JSONEq(t, `{"MSCONS":{"sender":"9910125000002","message_ref":"M1"}}`, string(b))
	sender, ref, ok := s.Mscons()
	require.True(t, ok)
	require.Equal(t, "9910125000002", sender.String())
	require.Equal(t, "M1", ref)
	_, ok = s.SMGW()
	require.False(t, ok)
	m, reason, ok := mustSource(t)["source_auto_substitute.json"].AutoSubstitute()
	require.True(t, ok)
	require.Equal(t, SubstitutionInterpolation, m)
	require.Equal(t, "gap <4h", reason)
	code, ok := m.MarketCode()
	require.True(t, ok)
	require.Equal(t, "Z92", code)
}

func TestSourceJSONRefusals(t *testing.T) {
	for _, in := range []string{
		`{"MSCONS":{"sender":"9900357000004","message_ref":"M1"}}`, // sender fails both check digits
		`{"MSCONS":{"sender":"9910125000002"}}`,                    // missing field
		`{"MSCONS":{"sender":"9910125000002","message_ref":""}}`,   // empty field
		`{"MSCONS":{"sender":"9910125000002","message_ref":"M1","x":1}}`,
		`{"Mscons":{"sender":"9910125000002","message_ref":"M1"}}`, // tag spelling is frozen
		`{"FTP":{"host":"x"}}`,
		`{"SMGW":{"gateway_id":"a"},"MANUAL":{"author":"b"}}`,
		`{"SMGW":null}`,
		`{}`,
		`[]`,
		`null`,
		`"MSCONS"`,
		`{"AUTO_SUBSTITUTE":{"method":"Z92","reason":"gap"}}`, // 0.12–0.14 procedure codes: a recorded break
		`{"AUTO_SUBSTITUTE":{"method":"INTERPOLATION"}}`,
		`{"VIRTUAL_METER":{"kind":"pv_self_consumption"}}`,
	} {
		var s Source
		err := json.Unmarshal([]byte(in), &s)
		require.ErrorIs(t, err, ErrInvalid, in)
		require.True(t, s.IsZero(), in)
	}
	_, err := json.Marshal(Source{})
	require.Error(t, err)
	require.Empty(t, Source{}.Kind())
	_, err = SourceMscons(BdewCode{}, "M1")
	require.ErrorIs(t, err, ErrInvalid)
	_, err = SourceManual("  ")
	require.ErrorIs(t, err, ErrInvalid)
	_, err = SourceVirtualMeter(0)
	require.ErrorIs(t, err, ErrInvalid)
}

func provenanceFixture() Provenance {
	note := "redelivered after Prüfmitteilung"
	return Provenance{
		{OccurredAt: utc("2026-03-01T00:00:00Z"), EventType: "INGESTED", Actor: "MSCONS"},
		{OccurredAt: time.Date(2026, 3, 2, 8, 30, 15, 123456000, time.FixedZone("CET", 3600)), EventType: "CORRECTED", Actor: "ops", Note: &note},
	}
}

func TestStoredFormProvenance(t *testing.T) {
	one := Provenance{{OccurredAt: utc("2026-03-01T00:00:00Z"), EventType: "INGESTED", Actor: "MSCONS"}}
	b, err := json.Marshal(one)
	require.NoError(t, err)
	require.Equal(t, `[{"occurred_at":"2026-03-01T00:00:00Z","event_type":"INGESTED","actor":"MSCONS","note":null}]`, string(b))

	p := provenanceFixture()
	got, err := json.Marshal(p)
	require.NoError(t, err)
	direct, err := p.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(got), string(direct))
	want := golden(t, "provenance.json", got)
	require.Equal(t, string(want), string(got))

	var back Provenance
	require.NoError(t, json.Unmarshal(want, &back))
	require.Len(t, back, 2)
	for i := range p {
		require.True(t, p[i].OccurredAt.Equal(back[i].OccurredAt))
		require.Equal(t, time.UTC, back[i].OccurredAt.Location())
		require.Equal(t, p[i].EventType, back[i].EventType)
		require.Equal(t, p[i].Actor, back[i].Actor)
		require.Equal(t, p[i].Note, back[i].Note)
	}

	empty, err := json.Marshal(Provenance(nil))
	require.NoError(t, err)
	require.Equal(t, "[]", string(empty))
}

func TestProvenanceJSONRefusals(t *testing.T) {
	for _, in := range []string{
		`null`,
		`{}`,
		`[{"occurred_at":"2026-03-01 00:00:00","event_type":"INGESTED","actor":"MSCONS","note":null}]`,
		`[{"occurred_at":"2026-03-01T00:00:00Z","event_type":"","actor":"MSCONS","note":null}]`,
		`[{"occurred_at":"2026-03-01T00:00:00Z","actor":"MSCONS","note":null}]`,
		`[{"occurred_at":"2026-03-01T00:00:00Z","event_type":"INGESTED","actor":"MSCONS","note":null,"extra":1}]`,
		`[{"occurred_at":1,"event_type":"INGESTED","actor":"MSCONS","note":null}]`,
	} {
		var p Provenance
		require.ErrorIs(t, json.Unmarshal([]byte(in), &p), ErrInvalid, in)
	}
	_, err := json.Marshal(Provenance{{EventType: "INGESTED", Actor: "x"}})
	require.Error(t, err)
}

// TestStoredFormCodes pins the canonical code spellings: the hot tier's CHECK
// constraints and every stored row depend on them.
func TestStoredFormCodes(t *testing.T) {
	names := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	codes := map[string][]string{
		"sparte":     names(len(Sparten()), func(i int) string { return Sparten()[i].String() }),
		"unit":       names(len(Units()), func(i int) string { return Units()[i].String() }),
		"quality":    names(len(Qualities()), func(i int) string { return Qualities()[i].String() }),
		"resolution": canonicalResolutions,
		"source_kind": {SourceKindMSCONS, SourceKindSMGW, SourceKindManual, SourceKindAutoSubstitute,
			SourceKindVirtualMeter, SourceKindImport},
		"substitution_method": substitutionList.allowed(),
		"virtual_meter_kind":  virtualMeterList.allowed(),
	}
	got, err := json.MarshalIndent(codes, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	want := golden(t, "codes.json", got)
	require.Equal(t, string(want), string(got))
	var decoded map[string][]string
	require.NoError(t, json.Unmarshal(want, &decoded))
	for _, s := range decoded["resolution"] {
		_, err := ParseResolution(s)
		require.NoError(t, err, s)
	}
	for _, s := range decoded["quality"] {
		_, err := ParseQuality(s)
		require.NoError(t, err, s)
	}
}
