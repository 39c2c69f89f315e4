package proof

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
)

const (
	badOp1  = "9910125000002"
	badOp2  = "9904768000008"
	badMalo = "41373559241"
)

// badDay is a Berlin electricity day well inside one month.
var badDay = time.Date(2025, time.October, 14, 22, 0, 0, 0, time.UTC)

// mkDelivery is a valid electricity delivery: n quarter-hours from from.
func mkDelivery(t testing.TB, op string, from time.Time, n int, value string, version uint64) meterstore.StoredSeries {
	t.Helper()
	malo, err := metering.ParseMaloID(badMalo)
	require.NoError(t, err)
	obis, err := metering.ParseObis("1-0:1.29.0")
	require.NoError(t, err)
	o, err := metering.ParseBdewCode(op)
	require.NoError(t, err)
	src, err := metering.SourceMscons(o, "BAD-1")
	require.NoError(t, err)
	v, err := metering.NewVersion(version)
	require.NoError(t, err)
	d := metering.Delivery{MaloID: malo, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh, Resolution: metering.ResolutionPT15M,
		Source: src, Scope: metering.ScopeFor(o, from, metering.SparteStrom), Version: v, RecordedAt: from.Add(30 * time.Hour)}
	for i := range n {
		f := from.Add(time.Duration(i) * 15 * time.Minute)
		d.Intervals = append(d.Intervals, metering.Interval{From: f, To: f.Add(15 * time.Minute), Value: decimal.RequireFromString(value), Quality: metering.QualityMeasured})
	}
	return meterstore.StoredSeries{Delivery: d, Extra: map[string]string{"anlage": badMalo}}
}

// TestIdentifierRulesAtTheWireBoundary: every identifier rule refuses its
// input with a *metering.IdentifierError (so errors.Is ErrInvalid) naming the
// rule — a wrong check digit is an error, never a value that slips through.
func TestIdentifierRulesAtTheWireBoundary(t *testing.T) {
	parse := map[string]func(string) error{
		"malo":    func(s string) error { _, err := metering.ParseMaloID(s); return err },
		"melo":    func(s string) error { _, err := metering.ParseMeloID(s); return err },
		"bdew":    func(s string) error { _, err := metering.ParseBdewCode(s); return err },
		"eic":     func(s string) error { _, err := metering.ParseEIC(s); return err },
		"version": func(s string) error { _, err := metering.ParseVersion(s); return err },
		"scope":   func(s string) error { _, err := metering.ParseVersionScope(s); return err },
	}
	for _, c := range []struct{ kind, in, rule string }{
		{"malo", "4137355924", "11 digits"},
		{"malo", "4137355924X", "11 digits"},
		{"malo", "01373559241", "must not start with 0"},
		{"malo", "41373559242", "check digit"},
		{"melo", "DE000123456789", "33 characters"},
		{"melo", "1E0001234567890ABCDEFGHIJKLMNOPQR", "country code"},
		{"melo", "DE00012345O7890ABCDEFGHIJKLMNOPQR", "positions 3-13"},
		{"melo", "DE0001234567890ABCDEFGHIJKLMNOP-R", "positions 14-33"},
		{"bdew", "991012500000", "13 digits"},
		{"bdew", "0000000000000", "placeholder"},
		{"bdew", "9910125000003", "check digit"},
		{"eic", "10YDE-RWENET---", ""},
		{"version", "0", "zero"},
		{"version", "020251023000001", "leading zeros"},
		{"version", "2025102300000A", "digits only"},
		{"scope", "9910125000002-2025-10", "21 characters"},
		{"scope", "9910125000002:2025-13", "month"},
		{"scope", "9910125000003:2025-10", "check digit"},
	} {
		err := parse[c.kind](c.in)
		require.Error(t, err, "%s %q", c.kind, c.in)
		require.ErrorIs(t, err, metering.ErrInvalid, "%s %q", c.kind, c.in)
		var ie *metering.IdentifierError
		require.ErrorAs(t, err, &ie, "%s %q: %v", c.kind, c.in, err)
		require.Contains(t, err.Error(), c.rule, "%s %q", c.kind, c.in)
	}
	// Each code list refuses an unknown code and a non-canonical spelling,
	// naming the canonical one.
	codes := map[string]func(string) error{
		"sparte":     func(s string) error { _, err := metering.ParseSparte(s); return err },
		"unit":       func(s string) error { _, err := metering.ParseUnit(s); return err },
		"quality":    func(s string) error { _, err := metering.ParseQuality(s); return err },
		"resolution": func(s string) error { _, err := metering.ParseResolution(s); return err },
	}
	for _, c := range []struct{ kind, unknown, spelling, canonical string }{
		{"sparte", "OEL", "strom", "STROM"},
		{"unit", "LITRE", "kWh", "KWH"},
		{"quality", "GUESSED", "measured", "MEASURED"},
		{"resolution", "PT7M", "pt15m", "PT15M"},
	} {
		err := codes[c.kind](c.unknown)
		var ce *metering.CodeError
		require.ErrorAs(t, err, &ce, "%s %q", c.kind, c.unknown)
		require.ErrorIs(t, err, metering.ErrInvalid)
		require.Empty(t, ce.Canonical)
		err = codes[c.kind](c.spelling)
		require.ErrorAs(t, err, &ce, "%s %q", c.kind, c.spelling)
		require.Equal(t, c.canonical, ce.Canonical, "%s %q names its canonical spelling", c.kind, c.spelling)
	}
}

// TestBadDeliveriesRefused: a corpus of malformed deliveries, each refused at
// Append with its own error kind, nothing written in either tier. The table
// has history in both tiers so the conflict rules are exercised in each.
func TestBadDeliveriesRefused(t *testing.T) {
	cfg := meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{
		{Name: "anlage", Kind: meterstore.Attribute, Nullable: true, Check: meterstore.ValueCheck{Kind: meterstore.CheckMalo}},
	}}.MustBuild()
	e := newEnv(t, badDay, cfg)
	coldDay, hotDay := badDay, badDay.Add(72*time.Hour)
	_, err := e.cur.st.Append(e.ctx, mkDelivery(t, badOp1, coldDay, 8, "1.5", 20251015000001), mkDelivery(t, badOp1, hotDay, 8, "2.5", 20251018000001))
	require.NoError(t, err)
	_, err = e.table(t).Archive(e.ctx, archiveNow(cfg, coldDay.Add(26*time.Hour)), 1)
	require.NoError(t, err)
	require.False(t, e.watermark(t).IsZero())

	count := func() (int64, int64) {
		r := e.query(t, `SELECT count(*) FROM readings_versions`)
		return asInt(t, r[0][0]), e.coldRows(t)
	}
	total, cold := count()
	require.EqualValues(t, 16, total)

	mut := func(base meterstore.StoredSeries, f func(d *metering.Delivery, x map[string]string)) meterstore.StoredSeries {
		d := base.Delivery
		d.Intervals = append([]metering.Interval(nil), base.Intervals...)
		x := map[string]string{}
		for k, v := range base.Extra {
			x[k] = v
		}
		f(&d, x)
		return meterstore.StoredSeries{Delivery: d, Extra: x}
	}
	novDay := time.Date(2025, time.November, 3, 23, 0, 0, 0, time.UTC)
	gasOct31End := time.Date(2025, time.November, 1, 5, 0, 0, 0, time.UTC) // 06:00 Berlin (CET) on 1 Nov
	op2, _ := metering.ParseBdewCode(badOp2)
	op1, _ := metering.ParseBdewCode(badOp1)

	cases := []struct {
		name  string
		s     meterstore.StoredSeries
		check func(t *testing.T, err error)
	}{
		{"zero MaLo (a parse error ignored upstream)", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) { d.MaloID = metering.MaloID{} }),
			isKind(metering.ErrInvalid)},
		{"checked column: MaLo with a wrong check digit", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(_ *metering.Delivery, x map[string]string) { x["anlage"] = "41373559242" }),
			func(t *testing.T, err error) {
				var ie *metering.IdentifierError
				require.ErrorAs(t, err, &ie)
				require.Contains(t, ie.Rule, "check digit")
			}},
		{"undeclared column", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(_ *metering.Delivery, x map[string]string) { x["tarif"] = "HT" }),
			func(t *testing.T, err error) { require.ErrorContains(t, err, "not declared") }},
		{"quality outside its code list", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) { d.Intervals[0].Quality = metering.Quality(200) }),
			isKind(metering.ErrInvalid)},
		{"sparte outside its code list", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) { d.Sparte = metering.Sparte(200) }),
			isKind(metering.ErrInvalid)},
		{"unit outside its code list", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) { d.Unit = metering.Unit(200) }),
			isKind(metering.ErrInvalid)},
		{"water in kWh", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) {
			d.Sparte = metering.SparteWasser
			d.Obis, _ = metering.ParseObis("8-0:1.0.0")
		}), isKind(metering.ErrUnitNotAllowed)},
		{"overlapping intervals in one delivery", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) {
			d.Resolution = metering.Resolution{}
			d.Intervals[1].From = d.Intervals[0].From.Add(5 * time.Minute)
			d.Intervals[1].To = d.Intervals[1].From.Add(15 * time.Minute)
		}), isKind(metering.ErrOverlap)},
		{"interval not one declared step", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) {
			d.Intervals[1].To = d.Intervals[1].From.Add(5 * time.Minute)
		}), isKind(metering.ErrInvalid)},
		{"wrong scope month", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) {
			d.Scope = metering.ScopeFor(op1, novDay, metering.SparteStrom)
		}), isKind(metering.ErrScopeMismatch)},
		{"gas scope at the 06:00 boundary", func() meterstore.StoredSeries {
			s := mkDelivery(t, badOp1, gasOct31End.Add(-15*time.Minute), 1, "1", 20251101000001) // 05:45 Berlin on 1 Nov: gas day 31 Oct
			s.Sparte = metering.SparteGas
			s.Obis, _ = metering.ParseObis("7-0:33.29.0")
			s.Scope = metering.ScopeFor(op1, gasOct31End, metering.SparteGas) // November: wrong for 05:45
			return s
		}(), isKind(metering.ErrScopeMismatch)},
		{"value beyond decimal(18,6)", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) {
			d.Intervals[0].Value = decimal.RequireFromString("1.0000001")
		}), isKind(metering.ErrInvalid)},
		{"sub-microsecond instant", mut(mkDelivery(t, badOp1, hotDay, 2, "1", 20251018000002), func(d *metering.Delivery, _ map[string]string) {
			d.Intervals[0].From = d.Intervals[0].From.Add(time.Nanosecond)
		}), isKind(metering.ErrInvalid)},
		{"overlap with a stored interval at one version (hot)", mut(mkDelivery(t, badOp1, hotDay.Add(5*time.Minute), 1, "2.5", 20251018000001), func(d *metering.Delivery, _ map[string]string) {
			d.Resolution = metering.Resolution{}
		}), func(t *testing.T, err error) {
			require.ErrorIs(t, err, hot.ErrOverlap)
			var oe *hot.OverlapError
			require.ErrorAs(t, err, &oe)
			require.True(t, store.IsConflict(err))
		}},
		{"second operator (hot)", mkDelivery(t, badOp2, hotDay, 2, "2.5", 20251019000001), func(t *testing.T, err error) {
			require.ErrorIs(t, err, hot.ErrSecondOperator)
			require.True(t, store.IsConflict(err))
		}},
		{"second operator (cold)", mkDelivery(t, badOp2, coldDay, 2, "1.5", 20251019000001), func(t *testing.T, err error) {
			require.ErrorIs(t, err, catalog.ErrSecondOperator)
			require.True(t, store.IsConflict(err))
		}},
		{"conflicting restatement (hot)", mkDelivery(t, badOp1, hotDay, 2, "2.6", 20251018000001), func(t *testing.T, err error) {
			require.ErrorIs(t, err, hot.ErrRestatement)
			var re *hot.RestatementError
			require.ErrorAs(t, err, &re)
			require.Contains(t, re.Fields, "value")
			require.True(t, store.IsConflict(err))
		}},
		{"conflicting restatement (cold)", mkDelivery(t, badOp1, coldDay, 2, "1.6", 20251015000001), func(t *testing.T, err error) {
			require.ErrorIs(t, err, catalog.ErrRestatement)
			require.True(t, store.IsConflict(err))
		}},
	}
	_ = op2
	seen := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.cur.st.Append(e.ctx, c.s)
			require.Error(t, err)
			c.check(t, err)
			if prev, dup := seen[err.Error()]; dup {
				require.Failf(t, "two refusals share one message", "%q and %q: %v", prev, c.name, err)
			}
			seen[err.Error()] = c.name
			t.Logf("refused: %v", err)
			n, cl := count()
			require.Equal(t, total, n, "nothing written")
			require.Equal(t, cold, cl, "nothing written to Iceberg")
		})
	}
	// A HotWriter refuses, never routes, an interval below its boundary.
	hw, err := e.table(t).HotWriter(e.ctx)
	require.NoError(t, err)
	_, err = hw.Append(e.ctx, mkDelivery(t, badOp1, coldDay, 1, "1.5", 20251016000001))
	require.ErrorIs(t, err, store.ErrBelowBoundary)
	n, cl := count()
	require.Equal(t, total, n)
	require.Equal(t, cold, cl)
	e.healthy(t)
}

func isKind(target error) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		require.True(t, errors.Is(err, target), "want %v, got %v", target, err)
	}
}
