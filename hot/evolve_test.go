package hot_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
)

// TestAddColumns: a coded column declared on an existing table is added to
// the parent, its partitions and a partition detached for archival, with its
// CHECK validated; a NOT NULL relaxed in the declaration is dropped; a value
// list declared on a column that existed is named, not enforced; a second run
// changes nothing.
func TestAddColumns(t *testing.T) {
	ctx := context.Background()
	spec := meterstore.TableSpec{Name: "readings_versions", Columns: []meterstore.Column{{Name: "contract"}, {Name: "region", Nullable: true}}}
	st, pool := newStore(t, spec)
	day11 := day10.Add(24 * time.Hour)
	rows := append(quarterHours(maloA, obisImport, day10, 4, 20260310000001), quarterHours(maloA, obisImport, day11, 4, 20260310000001)...)
	for i := range rows {
		rows[i].Extra = []*string{ptr("K1"), nil}
	}
	_, err := st.Write(ctx, rows)
	require.NoError(t, err)
	parts, err := st.Partitions(ctx)
	require.NoError(t, err)
	require.NoError(t, st.Detach(ctx, parts[0]))

	spec.Columns[0].Nullable = true
	spec.Columns[1].Values = []string{"NORD", "SUED"}
	spec.Columns = append(spec.Columns, meterstore.Column{Name: "ingest_source", Nullable: true, Values: []string{"MSCONS", "SMGW"}})
	cfg, err := spec.Build()
	require.NoError(t, err)
	evolved := hot.New(pool, cfg)
	added, err := evolved.AddColumns(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"ingest_source"}, added)

	for _, table := range []string{"readings_versions", parts[0].Name, parts[1].Name} {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'ingest_source'`, table).Scan(&n))
		require.Equal(t, 1, n, "%s has the new column", table)
	}
	var valid bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT convalidated FROM pg_constraint WHERE conrelid = 'readings_versions'::regclass AND conname = $1`,
		hot.ExtraCheckName("ingest_source")).Scan(&valid))
	require.True(t, valid, "the CHECK is validated")

	var pg *pgconn.PgError
	next := quarterHours(maloB, obisImport, day11, 1, 20260310000001)[0]
	_, err = pool.Exec(ctx, `INSERT INTO readings_versions (malo_id, obis_code, sparte, "from", "to", value, unit, quality, source_kind, version, version_scope, recorded_at, balancing_day, ingest_source)
		VALUES ('51238696781', '1-0:1.29.0', 'STROM', '2026-03-11 01:00+00', '2026-03-11 01:15+00', 1, 'KWH', 'MEASURED', 'MSCONS', 20260310000001, $1, now(), '2026-03-11', 'FAX')`, scopeMar)
	require.ErrorAs(t, err, &pg)
	require.Equal(t, "23514", pg.Code, "the database refuses a value outside the new column's list")
	_, err = evolved.Write(ctx, []meterstore.Row{withExtra(next, nil, nil, ptr("SMGW"))})
	require.NoError(t, err, "a row without the relaxed column and with the new one")

	unchecked, err := evolved.UncheckedColumns(ctx)
	require.NoError(t, err)
	require.Len(t, unchecked, 1)
	require.Contains(t, unchecked[0], "column region")
	require.Contains(t, unchecked[0], "ALTER TABLE")

	again, err := evolved.AddColumns(ctx)
	require.NoError(t, err)
	require.Empty(t, again)
}

func withExtra(r meterstore.Row, extra ...*string) meterstore.Row {
	r.Extra = extra
	return r
}
