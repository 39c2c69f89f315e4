package hot_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/metering"
)

const benchBatch = 26 * 4 * 96 // 9 984 rows: one Berlin day of 26 MaLos × 4 channels

// benchMalos are valid MaLo-IDs (check digit computed by trying each last digit).
var benchMalos = func() []string {
	var out []string
	for p := 4137355900; len(out) < 26; p++ {
		for d := 0; d < 10; d++ {
			s := fmt.Sprintf("%d%d", p, d)
			if _, err := metering.ParseMaloID(s); err == nil {
				out = append(out, s)
				break
			}
		}
	}
	return out
}()

func benchRows(version uint64) []meterstore.Row {
	var rows []meterstore.Row
	for _, m := range benchMalos {
		for _, o := range []string{"1-0:1.29.0", "1-0:2.29.0", "1-0:3.29.0", "1-0:4.29.0"} {
			rows = append(rows, quarterHours(m, o, day10, 96, version)...)
		}
	}
	return rows
}

func numeric(s string, exp int32) pgtype.Numeric {
	i, _ := new(big.Int).SetString(s, 10)
	return pgtype.Numeric{Int: i, Exp: exp, Valid: true}
}

// copyValues renders rows for CopyFrom in Columns() order.
func copyValues(cfg meterstore.TableConfig, rows []meterstore.Row) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = []any{r.MaloID, r.MeloID, r.ObisCode, r.Sparte, r.From, r.To,
			numeric(r.Value.Shift(6).Truncate(0).String(), -6), r.Unit, r.Quality, r.Resolution, r.SourceKind,
			r.SourceDetail, r.Provenance, numeric(fmt.Sprint(r.Version), 0), r.VersionScope, r.RecordedAt,
			pgtype.Date{Time: r.From.Truncate(24 * time.Hour), Valid: true}}
	}
	return out
}

// BenchmarkWriteVsCopy: batched Write (constraints on, displacement report) against
// COPY of the same rows into an unconstrained table with the same columns.
func BenchmarkWriteVsCopy(b *testing.B) {
	ctx := context.Background()
	st, pool := newStore(b, meterstore.TableSpec{Name: "readings_versions"})
	_, err := pool.Exec(ctx, `CREATE TABLE copy_target (LIKE readings_versions)`)
	require.NoError(b, err)
	cols := st.Config().ColumnNames()
	var writeDur, copyDur time.Duration
	rowsDone := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows := benchRows(20260310000001 + uint64(i))
		vals := copyValues(st.Config(), rows)
		t0 := time.Now()
		_, err := st.Write(ctx, rows)
		require.NoError(b, err)
		t1 := time.Now()
		n, err := pool.CopyFrom(ctx, pgx.Identifier{"copy_target"}, cols, pgx.CopyFromRows(vals))
		require.NoError(b, err)
		require.Equal(b, int64(len(rows)), n)
		copyDur += time.Since(t1)
		writeDur += t1.Sub(t0)
		rowsDone += len(rows)
	}
	b.StopTimer()
	w := float64(rowsDone) / writeDur.Seconds()
	c := float64(rowsDone) / copyDur.Seconds()
	b.ReportMetric(w, "write_rows/s")
	b.ReportMetric(c, "copy_rows/s")
	b.ReportMetric(w/c, "write/copy")
}
