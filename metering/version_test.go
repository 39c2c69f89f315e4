package metering

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustBdew(t testing.TB, s string) BdewCode {
	t.Helper()
	c, err := ParseBdewCode(s)
	require.NoError(t, err)
	return c
}

func TestParseVersion(t *testing.T) {
	for _, s := range []string{"1", "20210601060030", "1740787200000", "18446744073709551615"} {
		v, err := ParseVersion(s)
		require.NoError(t, err, s)
		require.Equal(t, s, v.String())
	}
	v, _ := ParseVersion("20210601060030")
	require.True(t, v.IsWellFormed()) // an MSCONS DTM+293 label
	require.Equal(t, uint64(20210601060030), v.Uint64())
	a, _ := ParseVersion("9999999999999")
	require.False(t, a.IsWellFormed())
	for _, s := range []string{"", "0", "00", "007", "-1", "+1", " 1", "1.0", "1e5", "18446744073709551616", "123456789012345678901"} {
		_, err := ParseVersion(s)
		var ie *IdentifierError
		require.ErrorAs(t, err, &ie, s)
		require.ErrorIs(t, err, ErrInvalid)
	}
	_, err := NewVersion(0)
	require.ErrorIs(t, err, ErrInvalid)
	n, err := NewVersion(5)
	require.NoError(t, err)
	require.Equal(t, "6", n.Next().String())
	require.Equal(t, -1, n.Compare(n.Next()))
	require.Equal(t, 0, n.Compare(n))
	require.Equal(t, 1, n.Next().Compare(n))
	top, _ := NewVersion(math.MaxUint64)
	require.Panics(t, func() { top.Next() })
	require.True(t, Version{}.IsZero())
}

func TestVersionArrival(t *testing.T) {
	label, err := ParseVersion("10000000000000") // the smallest 14-digit label
	require.NoError(t, err)
	for _, ts := range []time.Time{
		utc("2001-09-09T01:46:40Z"),
		utc("2026-03-01T00:00:00Z"),
		time.Date(2286, 11, 20, 17, 46, 39, 999_000_000, time.UTC),
	} {
		v, err := VersionArrival(ts)
		require.NoError(t, err, ts)
		require.Len(t, v.String(), 13, ts)
		require.False(t, v.IsWellFormed())
		require.Equal(t, -1, v.Compare(label), ts)
		require.Equal(t, uint64(ts.UnixMilli()), v.Uint64())
	}
	// Two writes in one second get different versions.
	a, _ := VersionArrival(utc("2026-03-01T00:00:00Z"))
	b, _ := VersionArrival(utc("2026-03-01T00:00:00Z").Add(time.Millisecond))
	require.Equal(t, -1, a.Compare(b))
	for _, ts := range []time.Time{{}, utc("2001-09-09T01:46:39Z"), utc("2286-11-20T17:46:40Z")} {
		_, err := VersionArrival(ts)
		require.ErrorIs(t, err, ErrInvalid, ts)
	}
}

func TestVersionScope(t *testing.T) {
	op := mustBdew(t, "9910125000002")
	// Gas at the 06:00 boundary: 05:59 local on 1 March belongs to February.
	s := ScopeFor(op, utc("2026-03-01T04:59:00Z"), SparteGas)
	require.Equal(t, "9910125000002:2026-02", s.String())
	require.Len(t, s.String(), 21)
	require.Equal(t, "9910125000002:2026-03", ScopeFor(op, utc("2026-03-01T05:00:00Z"), SparteGas).String())
	require.Equal(t, "9910125000002:2026-03", ScopeFor(op, utc("2026-03-01T04:59:00Z"), SparteStrom).String())
	// Summer: the boundary is 04:00Z.
	require.Equal(t, "9910125000002:2025-05", ScopeFor(op, utc("2025-06-01T03:45:00Z"), SparteGas).String())
	require.Equal(t, "9910125000002:2025-06", ScopeFor(op, utc("2025-06-01T04:00:00Z"), SparteGas).String())

	require.True(t, s.Covers(utc("2026-02-15T12:00:00Z"), SparteGas))
	require.True(t, s.Covers(utc("2026-03-01T04:45:00Z"), SparteGas))
	require.False(t, s.Covers(utc("2026-03-01T05:00:00Z"), SparteGas))
	require.False(t, s.Covers(utc("2026-03-01T04:45:00Z"), SparteStrom))
	require.Equal(t, op, s.Operator())
	require.Equal(t, date(2026, 2, 1), s.Month())

	parsed, err := ParseVersionScope("9910125000002:2026-02")
	require.NoError(t, err)
	require.Equal(t, s, parsed)
	gln, err := ParseVersionScope("4260304620007:2026-12")
	require.NoError(t, err)
	require.True(t, gln.Operator().PassesGS1())

	for _, in := range []string{
		"9900357000004:2026-02", // operator fails both check-digit procedures
		"9910125000003:2026-02", // wrong check digit
		"9910125000002:2026-13",
		"9910125000002:2026-00",
		"9910125000002:0000-01",
		"9910125000002-2026-02",
		"9910125000002:2026-2",
		"9910125000002:202602",
		" 9910125000002:2026-02",
		"991012500000:2026-02",
		"",
	} {
		_, err := ParseVersionScope(in)
		require.ErrorIs(t, err, ErrInvalid, in)
		var ie *IdentifierError
		require.ErrorAs(t, err, &ie, in)
	}
	require.True(t, VersionScope{}.IsZero())
	require.False(t, VersionScope{}.Covers(utc("2026-02-15T12:00:00Z"), SparteGas))
}
