package mscons_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const docDate = "DTM+137:202503010800?+00:303'"

// label is a DTM+293 segment of version digits at +00, format 304.
func label(digits string) string { return "DTM+293:" + digits + "?+00:304'" }

// A message that states two versions for the same values is refused: which
// one the sender meant cannot be known, and taking the last one stored a
// correction under the lower label (20250301… after 20250401…) without a
// word — whether the two stand in one location group or in the header.
func TestTwoVersionLabelsRefused(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	v := []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}

	text := interchange{msgs: []gmsg{{version: "20250401000000", values: v, countDelta: 1}}}.render()
	text = strings.Replace(text, label("20250401000000"), label("20250401000000")+label("20250301000000"), 1)
	res := readAll(t, strings.NewReader(text), opts())
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 1)
	require.Equal(t, "DTM", res.refused[0].Tag)
	require.ErrorContains(t, res.refused[0], `DTM+293 version "20250301000000" after "20250401000000" in one location group`)

	text = interchange{msgs: []gmsg{{values: v, countDelta: 2}}}.render()
	text = strings.Replace(text, docDate, docDate+label("20250401000000")+label("20250301000000"), 1)
	res = readAll(t, strings.NewReader(text), opts())
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 1)
	require.ErrorContains(t, res.refused[0], `DTM+293 twice in the header`)

	// One label in the header and another in a location group: the
	// location's own is the more specific statement and holds.
	text = interchange{msgs: []gmsg{{version: "20250401000000", values: v, countDelta: 1}}}.render()
	text = strings.Replace(text, docDate, docDate+label("20250301000000"), 1)
	res = readAll(t, strings.NewReader(text), opts())
	require.Empty(t, res.refused)
	require.Equal(t, "20250401000000", res.msgs[0].Deliveries[0].Version.String())
}

// A continuation part of a split message that repeats the header with
// another version (or with one where part 1 had none), or another document
// date (another derived version), is refused: its values were stored under
// part 1's version without a word. The same label repeated joins the parts
// under it.
func TestSplitPartRepeatingAnotherVersionRefused(t *testing.T) {
	start := utc("2025-03-01T00:00:00Z")
	vals := series(start, 15*time.Minute, 6, "KWH", false)
	render := func(first, second string) string {
		text := interchange{msgs: []gmsg{
			{access: "SPLIT-1", seq: "1:C", values: vals[:3], countDelta: len(first) / len(label("20250401000000"))},
			{access: "SPLIT-1", seq: "2:F", repeatHeader: true, doc: "DOC-M1", bare: true, values: vals[3:], countDelta: len(second) / len(label("20250401000000"))},
		}}.render()
		i := strings.Index(text, docDate) + len(docDate)
		text = text[:i] + first + text[i:]
		j := strings.LastIndex(text, docDate) + len(docDate)
		return text[:j] + second + text[j:]
	}
	for name, tc := range map[string]struct{ first, second, says string }{
		"another": {label("20250401000000"), label("20250501000000"), `repeats the header with version (DTM+293) "20250501000000", part 1 has "20250401000000"`},
		"added":   {"", label("20250501000000"), `repeats the header with version (DTM+293) "20250501000000", part 1 has ""`},
	} {
		t.Run(name, func(t *testing.T) {
			res := readAll(t, strings.NewReader(render(tc.first, tc.second)), opts())
			require.NoError(t, res.err)
			require.Empty(t, res.msgs)
			require.Len(t, res.refused, 1)
			require.ErrorContains(t, res.refused[0], tc.says)
		})
	}
	// Another document date in part 2 would give it another derived version.
	text := render("", "")
	j := strings.LastIndex(text, docDate)
	text = text[:j] + "DTM+137:202504010800?+00:303'" + text[j+len(docDate):]
	res := readAll(t, strings.NewReader(text), opts())
	require.NoError(t, res.err)
	require.Empty(t, res.msgs)
	require.Len(t, res.refused, 1)
	require.ErrorContains(t, res.refused[0], `repeats the header with document date (DTM+137) "2025-04-01T08:00:00Z", part 1 has "2025-03-01T08:00:00Z"`)

	res = readAll(t, strings.NewReader(render(label("20250401000000"), label("20250401000000"))), opts())
	require.NoError(t, res.err)
	require.Empty(t, res.refused)
	require.Len(t, res.msgs, 1)
	require.Equal(t, 2, res.msgs[0].Parts)
	require.Len(t, res.msgs[0].Deliveries, 1)
	require.Equal(t, "20250401000000", res.msgs[0].Deliveries[0].Version.String())
	requireContiguous(t, res.msgs[0].Deliveries[0].Intervals, start, start.Add(6*15*time.Minute), 15*time.Minute)
}

// A header that names its document, document date, Prüfidentifikator or
// sender twice is refused: the reader kept the last, and the sender is the
// operator of the version scope, the document date the derived version.
func TestHeaderSegmentTwiceRefused(t *testing.T) {
	at := utc("2025-03-01T00:00:00Z")
	v := []gval{{qual: "220", value: "1", from: at, to: at.Add(15 * time.Minute)}}
	for name, tc := range map[string]struct{ after, extra, says string }{
		"sender":   {"NAD+MS+9910125000002::293'", "NAD+MS+9904768000008::293'", `NAD+MS twice in the header`},
		"date":     {docDate, "DTM+137:202504010800?+00:303'", `DTM+137 twice in the header`},
		"pid":      {"RFF+Z13:13025'", "RFF+Z13:13018'", `RFF+Z13 twice in the header`},
		"document": {"BGM+7+DOC-M1+9'", "BGM+7+DOC-M2+9'", `BGM twice in the header`},
	} {
		t.Run(name, func(t *testing.T) {
			text := interchange{msgs: []gmsg{{values: v, countDelta: 1}}}.render()
			require.Contains(t, text, tc.after)
			text = strings.Replace(text, tc.after, tc.after+tc.extra, 1)
			res := readAll(t, strings.NewReader(text), opts())
			require.NoError(t, res.err)
			require.Empty(t, res.msgs)
			require.Len(t, res.refused, 1)
			require.ErrorContains(t, res.refused[0], tc.says)
		})
	}
}
