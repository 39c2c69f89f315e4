package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
)

func pointTable(t testing.TB) meterstore.TableConfig {
	cfg, err := meterstore.TableSpec{Name: "meter_reads_versions", TimeModel: meterstore.Point}.Build()
	require.NoError(t, err)
	return cfg
}

func TestPointTable(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil), pointTable(t))
	lg, _ := e.st.Table("readings_versions")
	zs, _ := e.st.Table("meter_reads_versions")
	reg := func(melo, value string, version uint64) meterstore.StoredSeries {
		return mk(t, dl{from: day0, melo: melo, obis: "1-0:1.8.0", value: value, step: "0.25", version: version, readings: true})
	}

	_, err := zs.Append(e.ctx, reg(meloA, "100", 0))
	require.ErrorIs(t, err, store.ErrWrongTimeModel)
	require.Contains(t, err.Error(), "AppendReadings")
	_, err = lg.AppendReadings(e.ctx, mk(t, dl{from: day0, value: "1"}))
	require.ErrorIs(t, err, store.ErrWrongTimeModel)
	require.Contains(t, err.Error(), "use Append")
	_, err = zs.AppendReadings(e.ctx, reg("", "100", 0))
	require.Error(t, err, "a point table needs the Messlokation")

	out, err := e.st.AppendReadings(e.ctx, reg(meloA, "100", 0), reg(meloB, "100", 0))
	require.NoError(t, err)
	require.Equal(t, 8, effects(out)[meterstore.Inserted], "two meters agreeing are two readings, not a restatement")
	out, err = e.st.AppendReadings(e.ctx, reg(meloA, "100", 0))
	require.NoError(t, err)
	require.Equal(t, 4, effects(out)[meterstore.Duplicate])
	_, err = e.st.AppendReadings(e.ctx, reg(meloA, "200", 20260306000001))
	require.NoError(t, err)
	require.Equal(t, int64(0), e.scalar(t, `SELECT count(*) FROM meter_reads_versions WHERE "to" IS NOT NULL`))

	_, err = e.st.Readings(maloA).Collect(e.ctx)
	require.ErrorIs(t, err, store.ErrAmbiguousSeries)
	require.Contains(t, err.Error(), ".Melo(..)")
	rs, err := e.st.Readings(maloA).Melo(meloA).Obis("1-0:1.8.0*255").Collect(e.ctx)
	require.NoError(t, err)
	require.Len(t, rs.Readings, 4)
	require.Equal(t, "200.75", rs.Readings[3].Value.String())
	require.Equal(t, meloA, rs.MeloID.String())
	last, err := e.st.Readings(maloA).Melo(meloB).Latest(e.ctx)
	require.NoError(t, err)
	require.Equal(t, "100.75", last.Value.String())
	require.True(t, last.At.Equal(day0.Add(45*time.Minute)))
	_, err = e.st.Readings(maloA).Latest(e.ctx)
	require.ErrorIs(t, err, store.ErrAmbiguousSeries)
	chs, err := e.st.Readings(maloA).Melo(meloA).Channels(e.ctx)
	require.NoError(t, err)
	require.Len(t, chs, 1)
	byCh, err := e.st.Readings(maloA).Melo(meloA).CollectByChannel(e.ctx)
	require.NoError(t, err)
	require.Len(t, byCh, 1)

	ds, err := e.st.Readings(maloA).Melo(meloA).Deliveries(e.ctx)
	require.NoError(t, err)
	require.Len(t, ds, 2, "one per delivery: both versions")
	require.Equal(t, uint64(20260301000001), ds[0].Version.Uint64())
	require.Len(t, ds[0].Readings, 4)
	require.NoError(t, ds[1].Validate())

	_, err = e.st.Series(maloA).Collect(e.ctx)
	require.NoError(t, err, "the interval table is empty for this MaLo")
	_, err = zs.Series(maloA).Collect(e.ctx)
	require.ErrorIs(t, err, store.ErrWrongTimeModel)
}

func TestSubjectRegistry(t *testing.T) {
	cfg := intervalTable(t, func(s *meterstore.TableSpec) {
		s.Columns = []meterstore.Column{{Name: "subject_ref", Nullable: true}}
		s.SubjectColumn = "subject_ref"
	})
	secret := []byte(strings.Repeat("k", 32))
	var reg *store.SubjectRegistry
	e := open(t, func(c *setup) {
		r, err := store.NewSubjectRegistryWithSecret(t.Context(), c.Pool, secret)
		require.NoError(t, err)
		reg, c.Subjects = r, r
	}, cfg)

	ref, err := e.st.RegisterSubject(e.ctx, "customer-4821")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(ref.String(), "subj_"))
	again, err := e.st.RegisterSubject(e.ctx, "customer-4821")
	require.NoError(t, err)
	require.Equal(t, ref, again, "a replay maps to the same subject")

	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0, value: "1", extra: map[string]string{"subject_ref": ref.String()}}))
	require.NoError(t, err)
	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0.Add(time.Hour), value: "1", extra: map[string]string{"subject_ref": "subj_invented"}}))
	require.ErrorIs(t, err, store.ErrUnknownSubject)

	// Erasure inside a caller's transaction that rolls back changes nothing.
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	require.NoError(t, reg.EraseTx(e.ctx, tx, ref, "DSAR-1", "privacy-team", day0))
	require.NoError(t, tx.Rollback(e.ctx))
	id, err := reg.Identifier(e.ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "customer-4821", id)

	require.NoError(t, e.st.EraseSubject(e.ctx, ref, "DSAR-2026-0042", "privacy-team", day0))
	_, err = reg.Identifier(e.ctx, ref)
	require.ErrorIs(t, err, store.ErrUnknownSubject)
	_, err = e.st.RegisterSubject(e.ctx, "customer-4821")
	require.ErrorIs(t, err, store.ErrSubjectErased, "a replay cannot re-register an erased identifier")
	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0.Add(2 * time.Hour), value: "1", extra: map[string]string{"subject_ref": ref.String()}}))
	require.ErrorIs(t, err, store.ErrUnknownSubject, "rows of an erased subject are not replayed")
	require.Equal(t, int64(4), e.scalar(t, `SELECT count(*) FROM readings`), "the readings stay")

	trail, err := reg.AuditTrail(e.ctx)
	require.NoError(t, err)
	require.Len(t, trail, 1)
	require.Equal(t, "erase", trail[0].Action)
	var dump string
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT string_agg(t::text, ' ') FROM meterstore_subject_erasures t`).Scan(&dump))
	require.NotContains(t, dump, "customer-4821", "the audit record omits the identifier")
	_, err = e.pool.Exec(e.ctx, `DELETE FROM meterstore_subject_erasures`)
	require.Error(t, err, "append-only")

	require.NoError(t, reg.LiftSuppression(e.ctx, "customer-4821", "DSAR-2026-0043", "privacy-team", day0))
	fresh, err := e.st.RegisterSubject(e.ctx, "customer-4821")
	require.NoError(t, err)
	require.NotEqual(t, ref, fresh, "a new reference, never the old link")

	// Without a secret a replay re-registers, honestly.
	plain, err := store.NewSubjectRegistry(e.ctx, e.pool)
	require.NoError(t, err)
	require.False(t, plain.Suppresses())
	r2, err := plain.Register(e.ctx, "customer-9")
	require.NoError(t, err)
	require.NoError(t, plain.Erase(e.ctx, r2, "T", "A", day0))
	_, err = plain.Register(e.ctx, "customer-9")
	require.NoError(t, err)
	_, err = store.NewSubjectRegistryWithSecret(e.ctx, e.pool, []byte("short"))
	require.Error(t, err)
}

func TestPurgeAndAudit(t *testing.T) {
	cfg := intervalTable(t, func(s *meterstore.TableSpec) {
		s.Columns = []meterstore.Column{{Name: "bilanzkreis", Nullable: true}}
	})
	e := open(t, nil, cfg)
	tbl, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx,
		mk(t, dl{from: day0, value: "1", extra: map[string]string{"bilanzkreis": "BK1"}}),
		mk(t, dl{from: day0.Add(72 * time.Hour), value: "1", extra: map[string]string{"bilanzkreis": "BK1"}}))
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0, n: 2, value: "2", version: 20260305000001, extra: map[string]string{"bilanzkreis": "BK2"}}))
	require.NoError(t, err)
	_, err = e.st.Append(e.ctx, mk(t, dl{from: day0.Add(72 * time.Hour), n: 1, value: "2", version: 20260305000001}))
	require.NoError(t, err)

	n, err := e.st.AuditAttributeColumn(e.ctx, "bilanzkreis")
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "two cold readings changed BK, one hot reading lost it")
	_, err = e.st.AuditAttributeColumn(e.ctx, "obis_code")
	require.Error(t, err)

	parquet := func() int { return len(s3test.Files(t, e.wh, ".parquet")) }
	require.Positive(t, parquet())
	require.Error(t, e.st.PurgeTable(e.ctx, "readings_versions", "readings"))
	require.NoError(t, e.st.PurgeTable(e.ctx, "readings_versions", "readings_versions"))
	require.Zero(t, parquet(), "data files are deleted")
	var left int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE 'readings_versions%' AND relkind IN ('r', 'p')`).Scan(&left))
	require.Zero(t, left)
	_, err = tbl.Append(e.ctx, mk(t, dl{from: day0.Add(72 * time.Hour), value: "1"}))
	require.ErrorIs(t, err, store.ErrPurged)
	_ = metering.QualityMeasured
}

// TestPointTableAcrossTheWatermark archives a point table, sends it late
// corrections and a late new reading below the watermark, and reads it back
// through the resolved relation and the typed reads: on the cold side a
// register reading keeps "to" null in Parquet and occupies only its instant,
// so a range ending at it excludes it and one starting at it includes it, in
// both tiers alike. Every figure is checked against the oracle.
func TestPointTableAcrossTheWatermark(t *testing.T) {
	cfg, err := meterstore.TableSpec{Name: "readings_versions", TimeModel: meterstore.Point}.Build()
	require.NoError(t, err)
	e := open(t, nil, cfg)
	tbl, _ := e.st.Table("readings_versions")
	oracle := testkit.NewOracle(cfg)
	reg := func(from time.Time, n int, value string, version uint64) meterstore.StoredSeries {
		return mk(t, dl{from: from, n: n, melo: meloA, obis: "1-0:1.8.0", value: value, step: "0.25", version: version, readings: true})
	}
	wm := day0.Add(48 * time.Hour)
	write := func(series ...meterstore.StoredSeries) store.AppendOutcome {
		t.Helper()
		out, err := e.st.AppendReadings(e.ctx, series...)
		require.NoError(t, err)
		_, err = oracle.RecordSeries(series...)
		require.NoError(t, err)
		return out
	}
	// 04:00 on day two up to the watermark, and on into the hot tier.
	write(reg(day0, 4, "100", 0), reg(wm.Add(-time.Hour), 8, "300", 0))
	e.archiveThrough(t, tbl, wm)

	out := write(reg(day0, 2, "150", 20260306000001), reg(day0.Add(time.Hour), 1, "101", 20260306000001))
	require.Equal(t, 3, out.ColdRows, "late corrections and a late reading go to Iceberg")
	for _, d := range out.Displacements {
		require.Equal(t, store.ColdTier, d.Tier)
		require.Nil(t, d.Row.To, "a register reading has no end")
	}
	require.Equal(t, map[meterstore.Effect]int{meterstore.Superseded: 2, meterstore.Inserted: 1}, effects(out))

	require.Equal(t, int64(0), e.scalar(t, `SELECT count(*) FROM readings_versions WHERE "to" IS NOT NULL`))
	require.Equal(t, int64(oracle.RawRowCount(time.Time{}, time.Time{})), e.scalar(t, `SELECT count(*) FROM readings_versions`))
	for _, r := range []struct {
		name     string
		from, to time.Time
	}{
		{"everything", day0, wm.Add(24 * time.Hour)},
		{"cold only", day0, wm},
		{"ends at a reading", day0, day0.Add(15 * time.Minute)},
		{"starts at a reading", day0.Add(15 * time.Minute), day0.Add(30 * time.Minute)},
		{"across the watermark", wm.Add(-15 * time.Minute), wm.Add(15 * time.Minute)},
		{"starts at the watermark", wm, wm.Add(time.Hour)},
	} {
		q := `SELECT count(*), sum(value) FROM readings WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3`
		res, err := e.st.Query(e.ctx, q, maloA, r.from, r.to)
		require.NoError(t, err, r.name)
		require.Equal(t, int64(oracle.RowCount(r.from, r.to)), res.Rows[0][0], r.name)
		require.True(t, oracle.Sum(r.from, r.to).Equal(dec(t, res.Rows[0][1])), "%s: sum %v, oracle %s", r.name, res.Rows[0][1], oracle.Sum(r.from, r.to))

		rs, err := e.st.Readings(maloA).Melo(meloA).Range(r.from, r.to).Collect(e.ctx)
		require.NoError(t, err, r.name)
		winners := oracle.Winners(r.from, r.to)
		require.Len(t, rs.Readings, len(winners), r.name)
		for i, w := range winners {
			require.True(t, w.From.Equal(rs.Readings[i].At), "%s: reading %d at %s, oracle %s", r.name, i, rs.Readings[i].At, w.From)
			require.True(t, w.Value.Equal(rs.Readings[i].Value), "%s: reading at %s: %s, oracle %s", r.name, w.From, rs.Readings[i].Value, w.Value)
		}
	}
	first, err := e.st.Readings(maloA).Melo(meloA).Range(day0, day0.Add(time.Minute)).Collect(e.ctx)
	require.NoError(t, err)
	require.Equal(t, "150", first.Readings[0].Value.String(), "the cold correction is current")
	last, err := e.st.Readings(maloA).Melo(meloA).Range(day0, wm).Latest(e.ctx)
	require.NoError(t, err)
	require.True(t, last.At.Equal(wm.Add(-15*time.Minute)), "latest below the watermark at %s", last.At)
	ds, err := e.st.Readings(maloA).Melo(meloA).Range(day0, wm).Deliveries(e.ctx)
	require.NoError(t, err)
	require.Len(t, ds, 4, "two archived deliveries and two corrections, all read from Iceberg")
	for _, d := range ds {
		require.NoError(t, d.Validate())
	}

	// A second operator's reading at a stored instant is refused on either side.
	for _, at := range []time.Time{day0.Add(15 * time.Minute), wm.Add(15 * time.Minute)} {
		_, err := e.st.AppendReadings(e.ctx, mk(t, dl{from: at, n: 1, melo: meloA, obis: "1-0:1.8.0", op: op2, value: "1", readings: true}))
		require.ErrorIs(t, err, meterstore.ErrConflict, "second operator at %s", at)
	}
	require.Equal(t, int64(oracle.RawRowCount(time.Time{}, time.Time{})), e.scalar(t, `SELECT count(*) FROM readings_versions`))
}
