package meterstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

func TestBuildRefusesWhatDegradesSilently(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    meterstore.TableSpec
		setting string
	}{
		{"partition step differs", meterstore.TableSpec{Name: "r_versions", PartitionStep: time.Hour}, "partition_step"},
		{"lag below step", meterstore.TableSpec{Name: "r_versions", SettlementLag: time.Hour}, "settlement_lag"},
		{"nullable identity", meterstore.TableSpec{Name: "r_versions", Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity, Nullable: true}}}, "extra_columns"},
		{"not an identifier", meterstore.TableSpec{Name: "Readings; DROP"}, "name"},
		{"too long", meterstore.TableSpec{Name: strings.Repeat("a", 35)}, "name"},
		{"values and check", meterstore.TableSpec{Name: "r", Columns: []meterstore.Column{{Name: "x", Values: []string{"A"}, Check: meterstore.ValueCheck{Kind: meterstore.CheckMalo}}}}, "extra_columns"},
		{"shadows core", meterstore.TableSpec{Name: "r", Columns: []meterstore.Column{{Name: "value"}}}, "extra_columns"},
		{"subject not attribute", meterstore.TableSpec{Name: "r", SubjectColumn: "nope"}, "subject_column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.spec.Build()
			require.ErrorIs(t, err, meterstore.ErrConfig)
			var ce *meterstore.ConfigError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, tc.setting, ce.Setting)
			require.NotEmpty(t, ce.Fix, "a refusal names the fix")
		})
	}
	_, err := meterstore.TableSpec{Name: strings.Repeat("a", 34)}.Build()
	require.NoError(t, err)
}

func TestMergeKeyFollowsDeclaration(t *testing.T) {
	lastgang := meterstore.TableSpec{Name: "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}, {Name: "bilanzkreis", Nullable: true}}}.MustBuild()
	require.Equal(t, []string{"malo_id", "obis_code", "from", "tenant"}, lastgang.MergeKey())
	require.Equal(t, "readings", lastgang.ResolvedName())
	require.True(t, lastgang.IsMergeKeyColumn("tenant"))
	require.False(t, lastgang.IsMergeKeyColumn("bilanzkreis"))

	point := meterstore.TableSpec{Name: "meter_reads_versions", TimeModel: meterstore.Point}.MustBuild()
	require.Equal(t, []string{"malo_id", "obis_code", "from", "melo_id"}, point.MergeKey())
	cols := point.Columns()
	require.True(t, cols[5].Nullable, "to is null on a point table")
	require.False(t, cols[1].Nullable, "melo_id is NOT NULL where it identifies")
}

func TestResolutionRenderedPerTable(t *testing.T) {
	cfg := meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}}.MustBuild()
	sql := cfg.ResolutionSQL()
	require.Contains(t, sql, `PARTITION BY "malo_id", "obis_code", "from", "tenant", "version_scope"`)
	require.Contains(t, sql, `FROM "readings_versions"`)
	require.Contains(t, sql, `AS _meterstore_resolved WHERE _meterstore_rank = 1`)
	require.NotContains(t, strings.SplitN(sql, "FROM", 2)[0], "_meterstore_rank", "the rank column never leaks into the projection")
	require.True(t, strings.HasPrefix(meterstore.ResolutionTemplate(), "SELECT {{.Projection}}"))
}

func TestCheckedColumnsStoreCanonicalSpelling(t *testing.T) {
	x, err := meterstore.ParseValueCheck("EIC:Y")
	require.NoError(t, err)
	// Amprion's Bilanzierungsgebiet, published by Amprion (domain-rules.md §3).
	v, err := x.Canonical(" 11yr000000011247 ")
	require.NoError(t, err)
	require.Equal(t, "11YR000000011247", v)
	_, err = x.Canonical("10YDE-EON------1") // a Y code? yes: control area, object type Y
	require.NoError(t, err)
	party, _ := meterstore.ParseValueCheck("EIC:X")
	_, err = party.Canonical("11YR000000011247")
	require.ErrorIs(t, err, metering.ErrInvalid, "a Y code in an EIC:X column is refused")
}

func TestEncodeDerivesBalancingDay(t *testing.T) {
	cfg := meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}}}.MustBuild()
	malo, _ := metering.ParseMaloID("41373559241")
	op, _ := metering.ParseBdewCode("9910125000002")
	obis, _ := metering.ParseObis("7-20:99.33.17")
	from := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC) // 02:00 local on 1 March: February's gas day and scope
	iv, err := metering.NewInterval(from, from.Add(time.Hour), decimal.RequireFromString("1.5"), metering.QualityMeasured)
	require.NoError(t, err)
	ver, _ := metering.ParseVersion("20260301000001")
	src, err := metering.SourceManual("test")
	require.NoError(t, err)
	d := metering.Delivery{MaloID: malo, Obis: obis, Sparte: metering.SparteGas, Unit: metering.UnitKWh,
		Intervals: []metering.Interval{iv}, Source: src,
		Scope: metering.ScopeFor(op, from, metering.SparteGas), Version: ver, RecordedAt: from}
	rows, err := cfg.Encode(meterstore.StoredSeries{Delivery: d, Extra: map[string]string{"tenant": "a"}})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, "2026-02-28", rows[0].BalancingDay.Format("2006-01-02"))
	require.Equal(t, "9910125000002:2026-02", rows[0].VersionScope)
	_, err = cfg.Encode(meterstore.StoredSeries{Delivery: d})
	require.Error(t, err, "tenant is NOT NULL")
	_, err = cfg.Encode(meterstore.StoredSeries{Delivery: d, Extra: map[string]string{"tenant": "a", "nope": "x"}})
	require.Error(t, err, "an undeclared column is refused")
}
