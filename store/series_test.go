package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
)

func TestSeries(t *testing.T) {
	cfg := intervalTable(t, func(s *meterstore.TableSpec) {
		s.Columns = []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}, {Name: "bilanzkreis", Nullable: true}}
	})
	e := open(t, nil, cfg)
	tbl, _ := e.st.Table("readings_versions")
	a := map[string]string{"tenant": "a", "bilanzkreis": "BK1"}
	_, err := e.st.Append(e.ctx,
		mk(t, dl{from: day0, value: "1", step: "1", extra: a}),
		mk(t, dl{from: day0, obis: exp, value: "0.5", extra: a}),
		mk(t, dl{from: day0, value: "9", extra: map[string]string{"tenant": "b"}}),
		mk(t, dl{from: day0.Add(24 * time.Hour), value: "2", extra: a}),
	)
	require.NoError(t, err)
	// Archive the first day: the series spans both tiers.
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	// A correction of one interval at a higher version, SUBSTITUTED, new Bilanzkreis.
	corr := mk(t, dl{from: day0.Add(15 * time.Minute), n: 1, value: "20", version: 20260305000001, quality: metering.QualitySubstituted,
		extra: map[string]string{"tenant": "a", "bilanzkreis": "BK2"}})
	_, err = e.st.Append(e.ctx, corr)
	require.NoError(t, err)

	t.Run("refusals", func(t *testing.T) {
		_, err := e.st.Series("41373559242").Collect(e.ctx)
		require.ErrorIs(t, err, metering.ErrInvalid, "a wrong check digit is an error, not an empty series")
		_, err = e.st.Series(maloA).Collect(e.ctx)
		require.ErrorIs(t, err, store.ErrAmbiguousSeries)
		require.Contains(t, err.Error(), ".Obis(..)")
		_, err = e.st.Series(maloA).Obis(imp).Collect(e.ctx)
		require.ErrorIs(t, err, store.ErrAmbiguousSeries)
		require.Contains(t, err.Error(), `.ColumnEq("tenant", ..)`)
		_, err = e.st.Series(maloA).ColumnEq("bilanzkreis", "BK1").Collect(e.ctx)
		require.ErrorIs(t, err, store.ErrNotMergeKey)
		_, err = e.st.Series(maloA).Melo("DE00").Collect(e.ctx)
		require.ErrorIs(t, err, metering.ErrInvalid)
		_, err = e.st.Series(maloA).Obis("1-0:1.29.0*255").ColumnEq("tenant", "a").CollectByChannel(e.ctx)
		require.NoError(t, err)
		_, err = e.st.Series(maloA).CollectByChannel(e.ctx)
		require.ErrorIs(t, err, store.ErrAmbiguousSeries, "two tenants on one channel are two readings")
	})

	t.Run("collect", func(t *testing.T) {
		s, prov, err := e.st.Series(maloA).Obis("1-0:1.29.0*255").ColumnEq("tenant", "a").CollectWithProvenance(e.ctx)
		require.NoError(t, err)
		require.True(t, prov.SpansTiers())
		require.NotNil(t, s)
		require.Equal(t, imp, s.Obis.String())
		require.Equal(t, metering.UnitKWh, s.Unit)
		require.Len(t, s.Intervals, 8)
		require.Equal(t, "20", s.Intervals[1].Value.String())
		require.Equal(t, metering.QualitySubstituted, s.Intervals[1].Quality)
		for i := 1; i < len(s.Intervals); i++ {
			require.True(t, s.Intervals[i-1].From.Before(s.Intervals[i].From))
		}
		kind := s.Source.Kind()
		require.Equal(t, metering.SourceKindMSCONS, kind)

		rs, err := e.st.Series(maloA).Obis(imp).ColumnEq("tenant", "a").Range(day0, day0.Add(time.Hour)).CollectResolved(e.ctx)
		require.NoError(t, err)
		require.Equal(t, metering.SparteStrom, rs.Sparte)
		require.Equal(t, map[string]string{"tenant": "a", "bilanzkreis": "BK2"}, rs.Extra, "from the newest contributing delivery")
		_, sp, err := e.st.Series(maloA).Obis(imp).ColumnEq("tenant", "a").CollectWithSparte(e.ctx)
		require.NoError(t, err)
		require.Equal(t, metering.SparteStrom, sp)
	})

	t.Run("empty", func(t *testing.T) {
		q := e.st.Series(maloA).Obis(imp).ColumnEq("tenant", "a").Range(day0.Add(-48*time.Hour), day0)
		s, err := q.Collect(e.ctx)
		require.NoError(t, err)
		require.Nil(t, s, "absence is not an empty series")
		ivs, err := q.Intervals(e.ctx)
		require.NoError(t, err)
		require.NotNil(t, ivs)
		require.Empty(t, ivs)
		l, err := q.Latest(e.ctx)
		require.NoError(t, err)
		require.Nil(t, l)
	})

	t.Run("quality after resolution", func(t *testing.T) {
		q := e.st.Series(maloA).Obis(imp).ColumnEq("tenant", "a").Range(day0, day0.Add(time.Hour))
		ivs, err := q.QualityIn(metering.QualityMeasured).Intervals(e.ctx)
		require.NoError(t, err)
		require.Len(t, ivs, 3, "the superseded MEASURED value is not current")
		l, err := e.st.Series(maloA).Obis(imp).ColumnEq("tenant", "a").QualityIn(metering.QualitySubstituted).Latest(e.ctx)
		require.NoError(t, err)
		require.True(t, l.From.Equal(day0.Add(15*time.Minute)))
	})

	t.Run("channels and by channel", func(t *testing.T) {
		q := e.st.Series(maloA).ColumnEq("tenant", "a")
		chs, err := q.Channels(e.ctx)
		require.NoError(t, err)
		require.Len(t, chs, 2)
		byCh, prov, err := q.CollectByChannelWithProvenance(e.ctx)
		require.NoError(t, err)
		require.NotNil(t, prov)
		require.Len(t, byCh, 2)
		o, _ := metering.ParseObis(exp)
		require.Len(t, byCh[o].Series.Intervals, 4)
		chs, err = e.st.Series(maloA).ColumnEq("tenant", "b").Channels(e.ctx)
		require.NoError(t, err)
		require.Len(t, chs, 1, "narrowed like the read")
		l, err := e.st.Series(maloA).Obis(imp).ColumnEq("tenant", "a").Latest(e.ctx)
		require.NoError(t, err)
		require.True(t, l.From.Equal(day0.Add(24*time.Hour+45*time.Minute)))
		_, err = e.st.Series(maloA).ColumnEq("tenant", "a").Latest(e.ctx)
		require.NoError(t, err, "one reading at the newest instant")
	})

}

// TestSeriesTwoWinners: two network operators for one reading (integrity
// constraints off) are two winners — refused with ErrInvariantViolated.
func TestSeriesTwoWinners(t *testing.T) {
	cfg := intervalTable(t, func(s *meterstore.TableSpec) { s.DisableIntegrityConstraints = true })
	e := open(t, nil, cfg)
	tbl, _ := e.st.Table("readings_versions")
	for i, op := range []string{op1, op2} {
		rows, err := cfg.Encode(mk(t, dl{from: day0.Add(72 * time.Hour), value: "1", op: op, version: 20260301000001 + uint64(i)}))
		require.NoError(t, err)
		_, err = tbl.Hot().Write(e.ctx, rows)
		require.NoError(t, err)
	}
	_, err := e.st.Series(maloA).Obis(imp).Collect(e.ctx)
	require.ErrorIs(t, err, store.ErrInvariantViolated)
}

// TestSeriesBadStoredIdentifier: a row a foreign writer stored with a wrong
// check digit is an error on the typed path, not a value.
func TestSeriesBadStoredIdentifier(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	_, err := e.st.Append(e.ctx, mk(t, dl{from: day0.Add(72 * time.Hour), value: "1"}))
	require.NoError(t, err)
	// A foreign writer stores a scope whose operator fails both check-digit
	// procedures (with the append-only trigger switched off, as only a superuser can).
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(e.ctx, `SET LOCAL session_replication_role = replica`)
	require.NoError(t, err)
	_, err = tx.Exec(e.ctx, `UPDATE readings_versions SET version_scope = '9910125000003:2026-03' WHERE "from" = $1`, day0.Add(72*time.Hour))
	require.NoError(t, err)
	require.NoError(t, tx.Commit(e.ctx))
	_, err = e.st.Series(maloA).Obis(imp).Collect(e.ctx)
	require.ErrorIs(t, err, metering.ErrInvalid)
	require.Contains(t, err.Error(), "version_scope")
	// The typed read refuses a wrong MaLo check digit on the way in.
	_, err = e.st.Series("41373559242").Collect(e.ctx)
	require.ErrorIs(t, err, metering.ErrInvalid)
}

// TestMehrfamilienhaus: two MeLos under one MaLo on a Lastgang table with
// identify_by_melo are two readings; .Melo narrows to one meter.
func TestMehrfamilienhaus(t *testing.T) {
	yes := true
	e := open(t, nil, intervalTable(t, func(s *meterstore.TableSpec) { s.IdentifyByMelo = &yes }))
	_, err := e.st.Append(e.ctx, mk(t, dl{from: day0, melo: meloA, value: "1"}), mk(t, dl{from: day0, melo: meloB, value: "1"}))
	require.NoError(t, err)
	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0, value: "1"}))
	require.Error(t, err, "a delivery naming no MeLo is refused where it identifies the reading")

	_, err = e.st.Series(maloA).Obis(imp).Collect(e.ctx)
	require.ErrorIs(t, err, store.ErrAmbiguousSeries)
	require.Contains(t, err.Error(), ".Melo(..)")
	s, err := e.st.Series(maloA).Obis(imp).Melo(" de0001234567890abcdefghijklmnopqs ").Collect(e.ctx)
	require.NoError(t, err)
	require.Equal(t, meloB, s.MeloID.String())
	require.Len(t, s.Intervals, 4)
	s, err = e.st.Series(maloA).Obis(imp).ColumnEq("melo_id", meloA).Collect(e.ctx)
	require.NoError(t, err)
	require.Equal(t, meloA, s.MeloID.String())
}
