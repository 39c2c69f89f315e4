package hot_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/metering"
)

const benchBatch = 26 * 4 * 96 // 9 984 rows: one Berlin day of 26 MaLos × 4 channels

// malosFor returns the 26 valid MaLo-IDs of batch set (check digit computed by
// trying each last digit): every set names other readings.
func malosFor(set int) []string {
	var out []string
	for p := 4137355900 + 26*set; len(out) < 26; p++ {
		for d := 0; d < 10; d++ {
			s := fmt.Sprintf("%d%d", p, d)
			if _, err := metering.ParseMaloID(s); err == nil {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// benchRowsFor is one day's delivery (10 March, UTC) of set's 26 MaLos × 4
// channels at version.
func benchRowsFor(set int, version uint64) []meterstore.Row {
	var rows []meterstore.Row
	for _, m := range malosFor(set) {
		for _, o := range []string{"1-0:1.29.0", "1-0:2.29.0", "1-0:3.29.0", "1-0:4.29.0"} {
			rows = append(rows, quarterHours(m, o, day10, 96, version)...)
		}
	}
	return rows
}

// benchRows is benchRowsFor set 0.
func benchRows(version uint64) []meterstore.Row { return benchRowsFor(0, version) }

// pgxCopyStream renders rows (as Write stored them) as a binary COPY stream in
// Columns() order, with pgx's own codecs, so that a floor measures the database
// and the wire, not the encoding.
func pgxCopyStream(b *testing.B, cfg meterstore.TableConfig, rows []meterstore.Row) []byte {
	m := pgtype.NewMap()
	oids := map[string]uint32{"text": pgtype.TextOID, "timestamptz": pgtype.TimestamptzOID, "date": pgtype.DateOID,
		"numeric(18,6)": pgtype.NumericOID, "numeric(20,0)": pgtype.NumericOID}
	cols := cfg.Columns()
	buf := append([]byte("PGCOPY\n\xff\r\n\x00"), 0, 0, 0, 0, 0, 0, 0, 0)
	for _, r := range rows {
		vals := []any{r.MaloID, r.MeloID, r.ObisCode, r.Sparte, r.From, r.To,
			pgtype.Numeric{Int: r.Value.Coefficient(), Exp: r.Value.Exponent(), Valid: true}, r.Unit, r.Quality, r.Resolution,
			r.SourceKind, r.SourceDetail, r.Provenance, pgtype.Numeric{Int: new(big.Int).SetUint64(r.Version), Valid: true},
			r.VersionScope, r.RecordedAt, pgtype.Date{Time: r.BalancingDay, Valid: true}}
		require.Len(b, vals, len(cols))
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(cols)))
		for i, c := range cols {
			oid, ok := oids[c.Type.PostgresType()]
			require.True(b, ok, c.Type.PostgresType())
			at := len(buf)
			buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
			out, err := m.Encode(oid, pgtype.BinaryFormatCode, vals[i], buf)
			require.NoError(b, err)
			if out != nil {
				buf = out
				binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
			}
		}
	}
	return binary.BigEndian.AppendUint16(buf, 0xffff)
}

// copyInto sends a binary COPY stream into table and returns how long it took.
func copyInto(b *testing.B, pool *pgxpool.Pool, table string, cols []string, stream []byte, rows int) time.Duration {
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	require.NoError(b, err)
	defer conn.Release()
	t0 := time.Now()
	tag, err := conn.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(stream),
		fmt.Sprintf("COPY %s (%s) FROM STDIN (FORMAT binary)", meterstore.QuoteIdent(table), meterstore.QuoteIdents(cols)))
	d := time.Since(t0)
	require.NoError(b, err)
	require.Equal(b, int64(rows), tag.RowsAffected())
	return d
}

// BenchmarkWriteVsCopy measures batched Write (constraints on, displacement
// report) against COPY of the same rows, and the floors that explain the ratio.
//
// Each iteration is one day's delivery (9 984 rows) of 26 further MaLos into the
// same, growing day partition. Write is timed for new rows (the common case: a
// day's delivery), for a redelivery of the same batch (all Duplicate, nothing
// sent), for a correction of it at the next version (all Superseded), and for the
// new rows on a table with integrity_constraints = false. The floors COPY the
// same rows, pre-encoded with pgx's codecs (outside the timer), into:
//
//   - copy_unconstrained: a plain table with the same columns (LIKE, no
//     constraints, no index, not partitioned) — the acceptance's comparison;
//   - copy_pk: the same plus the primary key;
//   - copy_schema_off: the table CreateTables makes with integrity constraints
//     off (day partitions, primary key, CHECKs);
//   - copy_schema_on: the table CreateTables makes with them on (plus both
//     exclusion constraints and the straddle index per partition) — what the
//     database alone costs for the rules Write must enforce.
//
// The floors receive the new and the correction batch, and so does the table
// without integrity constraints, so every table grows alike. Rates are per
// scenario from the median iteration: the benchmark machine is shared, and a
// median resists a neighbour's burst.
func BenchmarkWriteVsCopy(b *testing.B) {
	ctx := context.Background()
	pool := openPool(b)
	on := storeOn(b, pool, meterstore.TableSpec{Name: "readings_versions"})
	off := storeOn(b, pool, meterstore.TableSpec{Name: "unchecked_versions", DisableIntegrityConstraints: true})
	floorOn := storeOn(b, pool, meterstore.TableSpec{Name: "floor_on_versions"})
	floorOff := storeOn(b, pool, meterstore.TableSpec{Name: "floor_off_versions", DisableIntegrityConstraints: true})
	pk := meterstore.QuoteIdents(on.Config().PrimaryKey())
	for _, sql := range []string{
		`CREATE TABLE copy_unconstrained (LIKE readings_versions)`,
		`CREATE TABLE copy_pk (LIKE readings_versions, PRIMARY KEY (` + pk + `))`,
	} {
		_, err := pool.Exec(ctx, sql)
		require.NoError(b, err)
	}
	cols := on.Config().ColumnNames()
	const v1, v2 = 20260310000001, 20260310000002

	scenarios := []string{"write_new", "write_redelivery", "write_correction", "write_off",
		"copy_unconstrained", "copy_pk", "copy_schema_off", "copy_schema_on"}
	durs := map[string][]time.Duration{}
	timeWrite := func(name string, st *hot.Store, rows []meterstore.Row, want meterstore.Effect) []meterstore.Displacement {
		t0 := time.Now()
		ds, err := st.Write(ctx, rows)
		durs[name] = append(durs[name], time.Since(t0))
		require.NoError(b, err)
		require.Len(b, ds, len(rows))
		for _, d := range ds {
			require.Equal(b, want, d.Effect, name)
		}
		return ds
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows := benchRowsFor(i, v1)
		ds := timeWrite("write_new", on, rows, meterstore.Inserted)
		timeWrite("write_redelivery", on, rows, meterstore.Duplicate)
		corr := benchRowsFor(i, v2)
		for j := range corr {
			corr[j].Value = corr[j].Value.Add(decimal.New(1, -3))
		}
		dc := timeWrite("write_correction", on, corr, meterstore.Superseded)
		timeWrite("write_off", off, rows, meterstore.Inserted)

		b.StopTimer()
		_, err := off.Write(ctx, corr) // so that every table grows alike
		require.NoError(b, err)
		stored := make([]meterstore.Row, 0, 2*len(rows))
		for _, d := range append(ds, dc...) {
			stored = append(stored, d.Row)
		}
		newStream := pgxCopyStream(b, on.Config(), stored[:len(rows)])
		corrStream := pgxCopyStream(b, on.Config(), stored[len(rows):])
		b.StartTimer()
		for _, f := range []struct{ name, table string }{
			{"copy_unconstrained", "copy_unconstrained"}, {"copy_pk", "copy_pk"},
			{"copy_schema_off", floorOff.Config().Name()}, {"copy_schema_on", floorOn.Config().Name()},
		} {
			d := copyInto(b, pool, f.table, cols, newStream, len(rows)) + copyInto(b, pool, f.table, cols, corrStream, len(rows))
			durs[f.name] = append(durs[f.name], d/2)
		}
	}
	b.StopTimer()
	rate := map[string]float64{}
	for _, s := range scenarios {
		d := slices.Clone(durs[s])
		slices.Sort(d)
		rate[s] = float64(benchBatch) / d[len(d)/2].Seconds()
		b.ReportMetric(rate[s], s+"_rows/s")
	}
	b.ReportMetric(rate["write_new"]/rate["copy_unconstrained"], "new/unconstrained")
	b.ReportMetric(rate["write_off"]/rate["copy_unconstrained"], "off/unconstrained")
	b.ReportMetric(rate["copy_schema_on"]/rate["copy_unconstrained"], "floor_on/unconstrained")
	b.ReportMetric(rate["write_new"]/rate["copy_schema_on"], "new/floor_on")
	b.ReportMetric(rate["write_off"]/rate["copy_schema_off"], "off/floor_off")
}

// BenchmarkWritePhases breaks a 9 984-row Write down by step (hot.WritePhases:
// validation and grouping in Go, ensuring partitions, BEGIN, the one round trip
// taking the advisory locks and reading the prior state, classification, COPY
// encoding in Go, the COPY itself, the checks across partitions and across
// tiers, COMMIT), in ms per batch, for new rows (a day's delivery of further
// MaLos into a growing partition), a redelivery (all Duplicate) and a
// correction (all Superseded), on a table with integrity constraints and, for
// new rows, one without. The against_cold runs write new rows to a table whose
// writes are compared with a cold tier (CheckAgainstCold) that holds nothing:
// what the comparison costs this tier (the detached partitions' read) besides
// the cold tier's own read; small_against_cold writes one reading's day (96
// rows), where that fixed cost weighs most.
func BenchmarkWritePhases(b *testing.B) {
	ctx := context.Background()
	pool := openPool(b)
	on := storeOn(b, pool, meterstore.TableSpec{Name: "readings_versions"})
	off := storeOn(b, pool, meterstore.TableSpec{Name: "unchecked_versions", DisableIntegrityConstraints: true})
	checked := storeOn(b, pool, meterstore.TableSpec{Name: "checked_versions"})
	checked.CheckAgainstCold(func(context.Context, []string, time.Time, time.Time) (time.Time, []meterstore.Row, error) {
		return time.Time{}, nil, nil
	})
	const v1, v2 = 20260310000001, 20260310000002
	set := 0
	next := func() []meterstore.Row { set++; return benchRowsFor(set, v1) }
	run := func(name string, st *hot.Store, setup func() []meterstore.Row, want meterstore.Effect) {
		b.Run(name, func(b *testing.B) {
			d := map[string]time.Duration{}
			written := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				rows := setup()
				b.StartTimer()
				ds, err := st.TimedWrite(ctx, rows, d)
				require.NoError(b, err)
				require.Equal(b, want, ds[0].Effect)
				written += len(rows)
			}
			var total time.Duration
			for _, p := range hot.WritePhases {
				total += d[p]
				b.ReportMetric(float64(d[p].Microseconds())/1000/float64(b.N), p+"_ms")
			}
			b.ReportMetric(float64(written)/total.Seconds(), "rows/s")
		})
	}
	run("new", on, next, meterstore.Inserted)
	run("redelivery", on, func() []meterstore.Row {
		rows := next()
		_, err := on.Write(ctx, rows)
		require.NoError(b, err)
		return rows
	}, meterstore.Duplicate)
	run("correction", on, func() []meterstore.Row {
		_, err := on.Write(ctx, next())
		require.NoError(b, err)
		rows := benchRowsFor(set, v2)
		for j := range rows {
			rows[j].Value = rows[j].Value.Add(decimal.New(1, -3))
		}
		return rows
	}, meterstore.Superseded)
	run("new_unchecked", off, next, meterstore.Inserted)
	run("new_against_cold", checked, next, meterstore.Inserted)
	run("small_against_cold", checked, func() []meterstore.Row {
		set++
		return quarterHours(malosFor(set)[0], "1-0:1.29.0", day10, 96, v1)
	}, meterstore.Inserted)
}
