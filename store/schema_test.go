package store_test

import (
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/testhooks"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// TestColdReadsByFieldIDAfterForeignRename: another engine renames two
// columns (Spark's RENAME COLUMN, done here through iceberg-go's
// UpdateSchema) and rewrites every data file under the new names, as its
// compaction would. The cold tier still reads every column by its Iceberg
// field id: the answers, an equality pushed into planning on a renamed column
// and a reopened store all stay what the oracle says.
func TestColdReadsByFieldIDAfterForeignRename(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	oracle := testkit.NewOracle(tbl.Config())
	series := append(mkDays(t, day0, 3, "1"), mk(t, dl{from: day0.Add(24 * time.Hour), value: "7", version: 20260301000002, n: 2}))
	_, err := e.st.Append(e.ctx, series...)
	require.NoError(t, err)
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	named := filesNamedAsIDs(t, e, tbl)
	require.Positive(t, named[true], "the store's files read by name, as by id")
	require.Zero(t, named[false], "the store's files read by name, as by id")

	storetest.SchemaChange(t, e.ctx, tbl.Cold(), func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.RenameColumn([]string{"quality"}, "qualitaet").RenameColumn([]string{"obis_code"}, "obis")
	})
	rewriteUnderCurrentNames(t, e, tbl)
	named = filesNamedAsIDs(t, e, tbl)
	require.Positive(t, named[false], "the files under the new names are read by id")
	require.Zero(t, named[true], "the files under the new names are read by id")

	check := func(st *store.Store) {
		t.Helper()
		all := time.Time{}
		res, err := st.Query(e.ctx, `SELECT count(*), count(*) FILTER (WHERE quality = 'MEASURED'), sum(value) FROM readings`)
		require.NoError(t, err)
		require.Equal(t, int64(oracle.RowCount(all, all)), res.Rows[0][0])
		require.Equal(t, res.Rows[0][0], res.Rows[0][1], "quality reads by field id in the renamed files")
		require.True(t, oracle.Sum(all, all).Equal(dec(t, res.Rows[0][2])))
		res, err = st.Query(e.ctx, `SELECT count(*) FROM readings WHERE obis_code = $1 AND "from" < $2`, imp, day0.Add(48*time.Hour))
		require.NoError(t, err)
		require.Equal(t, int64(oracle.RowCount(all, day0.Add(48*time.Hour))), res.Rows[0][0], "an equality on a renamed column plans by field id")
	}
	check(e.st)
	reopened, err := store.Open(e.ctx, e.cfg)
	require.NoError(t, err, "a rename keeps the layout: the sort order is checked by field id")
	defer reopened.Close()
	check(reopened)

	// iceberg_scan matches columns by the schema's names: the cold half goes
	// through read_parquet instead, and EXPLAIN says why.
	dir := os.Getenv(engine.EnvExtensionDirectory)
	if dir == "" {
		t.Log("iceberg_scan not checked: no DuckDB extension directory (go tool task extensions)")
		return
	}
	cfg := e.cfg
	cfg.Extensions = engine.Extensions{Directory: dir, Cold: engine.PathExtension}
	ext, err := store.Open(e.ctx, cfg)
	require.NoError(t, err)
	defer ext.Close()
	check(ext)
	explain, err := ext.Engine().Explain(e.ctx, `SELECT count(*) FROM readings`)
	require.NoError(t, err)
	require.Contains(t, explain, `through read_parquet (not iceberg_scan: the cold table names field id 3 "obis", configured "obis_code"`)
}

// filesNamedAsIDs counts the cold files the engine plans for tbl by whether
// they are read by name as by id (engine.ColdFile.NamesAsIDs).
func filesNamedAsIDs(t *testing.T, e *env, tbl *store.Table) map[bool]int {
	t.Helper()
	require.NoError(t, tbl.Cold().Refresh(e.ctx))
	cold := store.ColdTierOf(tbl.Cold())
	snap, _, err := cold.Watermark(e.ctx, 0)
	require.NoError(t, err)
	p, err := cold.Plan(e.ctx, snap, time.Time{}, time.Time{}, nil)
	require.NoError(t, err)
	n := map[bool]int{}
	for _, f := range p.Files {
		n[f.NamesAsIDs]++
	}
	return n
}

// rewriteUnderCurrentNames replaces every data file of tbl's cold table by one
// written under the table's current column names, as another engine's
// compaction would, in a commit that carries no MeterStore property.
func rewriteUnderCurrentNames(t *testing.T, e *env, tbl *store.Table) {
	t.Helper()
	cold := tbl.Cold()
	require.NoError(t, cold.Refresh(e.ctx))
	it := cold.Iceberg()
	scan := it.Scan()
	defer scan.Close()
	rows, err := scan.ToArrowTable(e.ctx)
	require.NoError(t, err)
	defer rows.Release()
	tx := it.NewTransaction()
	require.NoError(t, tx.OverwriteTable(e.ctx, rows, rows.NumRows(), iceberg.Properties{}))
	_, err = tx.Commit(e.ctx)
	require.NoError(t, err)
	require.NoError(t, cold.Refresh(e.ctx))
}

// addForeignFile registers the Parquet file at path, of rows in the month of
// at, in tbl's cold table as another engine's add_files would: its statistics
// read from its footer by column name, in a commit carrying props as its
// snapshot properties (nil: none of MeterStore's).
func addForeignFile(t *testing.T, e *env, tbl *store.Table, path string, at time.Time, props iceberg.Properties) {
	t.Helper()
	storetest.AddDataFile(t, e.ctx, tbl.Cold(), path, map[string]any{"from_month": storetest.PartitionMonth(at)}, props)
}

// regionTable is intervalTable with the coded attribute column region
// declared after the others: the additive change the tests apply.
func regionTable(t testing.TB) meterstore.TableConfig {
	return intervalTable(t, func(s *meterstore.TableSpec) {
		s.Columns = append(s.Columns, meterstore.Column{Name: "region", Nullable: true, Values: []string{"NORD", "SUED"}})
	})
}

// TestAddColumnAcrossTheWatermark: a column declared on a table with archived
// history is added to both tiers and the resolved view when the store opens;
// historical files read it as NULL, new rows carry it in whichever tier they
// land — a late correction in Iceberg, current data in PostgreSQL, then
// archived — and readings, readings_versions, the typed reads, the oracle and
// the view's SQL in a bare DuckDB agree.
func TestAddColumnAcrossTheWatermark(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	before := mkDays(t, day0, 3, "1")
	_, err := e.st.Append(e.ctx, before...)
	require.NoError(t, err)
	tbl, _ := e.st.Table("readings_versions")
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	require.NoError(t, e.st.Close())

	cfg := regionTable(t)
	e.cfg.Tables = []meterstore.TableConfig{cfg}
	st, err := store.Open(e.ctx, e.cfg)
	require.NoError(t, err)
	e.st = st
	defer st.Close()
	tbl, _ = st.Table("readings_versions")
	require.Equal(t, store.SchemaState{Added: []string{"region"}}, tbl.SchemaState())
	f, ok := tbl.Cold().Iceberg().Schema().FindFieldByName("region")
	require.True(t, ok)
	require.Equal(t, meterstore.FirstExtraFieldID, f.ID)
	require.False(t, f.Required)

	oracle := testkit.NewOracle(cfg)
	after := []meterstore.StoredSeries{
		mk(t, dl{from: day0.Add(24 * time.Hour), n: 2, value: "2", version: 20260301000002, extra: map[string]string{"region": "NORD"}}), // late: Iceberg
		mk(t, dl{from: day0.Add(48 * time.Hour), value: "3", version: 20260301000002, extra: map[string]string{"region": "SUED"}}),       // hot, archived below
		mk(t, dl{from: day0.Add(72 * time.Hour), value: "4"}),
	}
	out, err := st.Append(e.ctx, after...)
	require.NoError(t, err)
	require.Equal(t, 2, out.ColdRows, "the correction below the watermark went to Iceberg")
	_, err = st.Append(e.ctx, mk(t, dl{from: day0.Add(72 * time.Hour), value: "5", extra: map[string]string{"region": "WEST"}}))
	require.Error(t, err, "the column's value list is checked")
	for _, s := range append(before, after...) {
		_, err = oracle.RecordSeries(s)
		require.NoError(t, err)
	}
	e.archiveThrough(t, tbl, day0.Add(72*time.Hour))
	named := filesNamedAsIDs(t, e, tbl)
	require.Equal(t, 2, named[false], "the two days' files written before the column was added are read by id")
	require.Positive(t, named[true], "the correction's and the archived day's files, holding it, are read by name")

	all := time.Time{}
	res, err := st.Query(e.ctx, `SELECT count(*), sum(value), count(region) FROM readings`)
	require.NoError(t, err)
	require.Equal(t, int64(oracle.RowCount(all, all)), res.Rows[0][0])
	require.True(t, oracle.Sum(all, all).Equal(dec(t, res.Rows[0][1])))
	require.Equal(t, int64(2+4), res.Rows[0][2])
	res, err = st.Query(e.ctx, `SELECT count(*), count(region) FROM readings_versions`)
	require.NoError(t, err)
	require.Equal(t, []any{int64(oracle.RawRowCount(all, all)), int64(6)}, res.Rows[0])

	// Row by row against the oracle's winners, in both tiers.
	res, err = st.Query(e.ctx, `SELECT "from", CAST(value AS VARCHAR), region FROM readings ORDER BY "from"`)
	require.NoError(t, err)
	winners := oracle.Winners(all, all)
	require.Len(t, res.Rows, len(winners))
	for i, w := range winners {
		var region any
		if w.Extra[0] != nil {
			region = *w.Extra[0]
		}
		require.True(t, w.From.Equal(res.Rows[i][0].(time.Time)), "row %d", i)
		require.True(t, w.Value.Equal(decimal.RequireFromString(res.Rows[i][1].(string))), "row %d", i)
		require.Equal(t, region, res.Rows[i][2], "row %d at %s", i, w.From)
	}

	// The typed read recovers the column of the newest contributing delivery.
	rs, err := st.Series(maloA).Obis(imp).Range(day0.Add(48*time.Hour), day0.Add(72*time.Hour)).CollectResolved(e.ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"region": "SUED"}, rs.Extra)
	rs, err = st.Series(maloA).Obis(imp).Range(day0, day0.Add(24*time.Hour)).CollectResolved(e.ctx)
	require.NoError(t, err)
	require.Empty(t, rs.Extra, "history written before the column reads it as NULL")

	// The resolved view's SQL, run unmodified in a bare DuckDB over the files.
	v, err := e.cat.View(e.ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, cfg.ResolutionSQL(), v.DialectSQL("duckdb"))
	if loc := tbl.Cold().Iceberg().Location(); !strings.HasPrefix(loc, "file://") {
		t.Skip("the bare DuckDB reads the local file system")
	}
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = "'" + f.Path + "'"
	}
	bare, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer bare.Close()
	_, err = bare.ExecContext(e.ctx, `CREATE VIEW readings_versions AS SELECT * FROM read_parquet([`+strings.Join(paths, ", ")+`], union_by_name = true)`)
	require.NoError(t, err)
	var n, regions int64
	var sum string
	require.NoError(t, bare.QueryRowContext(e.ctx, `SELECT count(*), CAST(sum(value) AS VARCHAR), count(region) FROM (`+v.DialectSQL("duckdb")+`) AS r`).Scan(&n, &sum, &regions))
	require.Equal(t, int64(oracle.RowCount(all, all)-4), n, "the cold rows: all but the hot day")
	require.True(t, oracle.Sum(all, day0.Add(72*time.Hour)).Equal(decimal.RequireFromString(sum)))
	require.Equal(t, int64(6), regions)
}

// TestAddColumnCrashBetweenTiersRepairedByNextOpen: Open stopped after the
// cold table took the column and before PostgreSQL did (a crash between the
// two steps) leaves Iceberg ahead; the next Open adds the column to
// PostgreSQL, and rows carrying it are written, archived and read back.
func TestAddColumnCrashBetweenTiersRepairedByNextOpen(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	_, err := e.st.Append(e.ctx, mkDays(t, day0, 2, "1")...)
	require.NoError(t, err)
	tbl, _ := e.st.Table("readings_versions")
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	require.NoError(t, e.st.Close())

	crash := errors.New("crash")
	e.cfg.Tables = []meterstore.TableConfig{regionTable(t)}
	hooks := testhooks.Hooks{Schema: func(s testhooks.SchemaStep) error {
		if s == testhooks.AfterColdSchema {
			return crash
		}
		return nil
	}}
	_, err = store.Open(testhooks.With(e.ctx, hooks), e.cfg)
	require.ErrorIs(t, err, crash)
	_, ok := tbl.Cold().Iceberg().Schema().FindFieldByName("region")
	require.False(t, ok, "the old handle's state")
	require.NoError(t, tbl.Cold().Refresh(e.ctx))
	_, ok = tbl.Cold().Iceberg().Schema().FindFieldByName("region")
	require.True(t, ok, "Iceberg took the column")
	var n int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM pg_attribute WHERE attrelid = 'readings_versions'::regclass AND attname = 'region'`).Scan(&n))
	require.Zero(t, n, "PostgreSQL did not")

	st, err := store.Open(e.ctx, e.cfg)
	require.NoError(t, err)
	defer st.Close()
	tbl, _ = st.Table("readings_versions")
	require.Equal(t, store.SchemaState{Added: []string{"region"}}, tbl.SchemaState(), "the next Open finishes PostgreSQL's step")
	_, err = st.Append(e.ctx, mk(t, dl{from: day0.Add(24 * time.Hour), value: "2", version: 20260301000002, extra: map[string]string{"region": "NORD"}}))
	require.NoError(t, err)
	e.st = st
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	res, err := st.Query(e.ctx, `SELECT region, count(*) FROM readings GROUP BY region ORDER BY region NULLS FIRST`)
	require.NoError(t, err)
	require.Equal(t, [][]any{{nil, int64(4)}, {"NORD", int64(4)}}, res.Rows)
}

// TestNarrowingQuarantinesOnlyItsTable: each change that narrows a table's
// stored schema opens it quarantined, that change named — in SchemaState,
// the archiver's outcome, VerifyInvariant, system.tables and the metric —
// with nothing applied to either tier: its archival is refused (and its
// writes, where what identifies a reading changed), its queries answer as
// before from the stored layout, and another table archives on. Undoing the
// configuration lifts the quarantine.
func TestNarrowingQuarantinesOnlyItsTable(t *testing.T) {
	tenanted := func(mod func(*meterstore.TableSpec)) meterstore.TableConfig {
		return intervalTable(t, func(s *meterstore.TableSpec) {
			s.Columns = []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}, {Name: "contract", Nullable: true}}
			if mod != nil {
				mod(s)
			}
		})
	}
	other := intervalTable(t, func(s *meterstore.TableSpec) { s.Name = "other_versions" })
	e := open(t, nil, tenanted(nil), other)
	a, _ := e.st.Table("readings_versions")
	b, _ := e.st.Table("other_versions")
	oracle := testkit.NewOracle(a.Config())
	var series []meterstore.StoredSeries
	for i := range 3 {
		series = append(series, mk(t, dl{from: day0.Add(time.Duration(i) * 24 * time.Hour), value: "1", step: "0.5",
			extra: map[string]string{"tenant": "T1", "contract": "K1"}}))
	}
	_, err := a.Append(e.ctx, series...)
	require.NoError(t, err)
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	_, err = b.Append(e.ctx, mkDays(t, day0, 10, "2")...)
	require.NoError(t, err)
	e.archiveThrough(t, a, day0.Add(24*time.Hour))
	e.archiveThrough(t, b, day0.Add(24*time.Hour))
	schemaID := a.Cold().Iceberg().Schema().ID
	require.NoError(t, e.st.Close())

	later := day0.Add(30 * 24 * time.Hour) // every window settled
	check := func(t *testing.T, cfg meterstore.TableConfig, kind string) {
		e.cfg.Tables = []meterstore.TableConfig{cfg, other}
		st, err := store.Open(e.ctx, e.cfg)
		require.NoError(t, err, "a quarantined table does not stop the store")
		defer st.Close()
		a, _ := st.Table("readings_versions")
		b, _ := st.Table("other_versions")
		q := a.SchemaState().Quarantine
		require.NotEmpty(t, q)
		require.Contains(t, strings.Join(q, "; "), kind)
		require.Empty(t, b.SchemaState().Quarantine)

		w, err := a.Watermark(e.ctx)
		require.NoError(t, err)
		out, err := a.Archive(e.ctx, later, 1)
		require.ErrorIs(t, err, store.ErrQuarantined)
		require.Equal(t, q, out.Quarantine, "the archiver's outcome names the reasons")
		require.Empty(t, out.Windows)
		require.True(t, out.Watermark.Equal(w), "the watermark freezes")
		out, err = b.Archive(e.ctx, later, 1)
		require.NoError(t, err, "the other table archives on")
		require.Len(t, out.Windows, 1)

		all := time.Time{}
		res, err := st.Query(e.ctx, `SELECT count(*), sum(value) FROM readings`)
		require.NoError(t, err, "queries answer from the stored layout")
		require.Equal(t, int64(oracle.RowCount(all, all)), res.Rows[0][0])
		require.True(t, oracle.Sum(all, all).Equal(dec(t, res.Rows[0][1])))
		res, err = st.Query(e.ctx, `SELECT count(*), count(DISTINCT tenant), min(contract) FROM readings_versions`)
		require.NoError(t, err)
		require.Equal(t, []any{int64(oracle.RawRowCount(all, all)), int64(1), "K1"}, res.Rows[0])

		// A change of what identifies a reading refuses writes; any other
		// leaves them to the stored layout (a redelivery here: a Duplicate).
		_, err = a.Append(e.ctx, series[2])
		_, herr := a.HotWriter(e.ctx)
		if kind == catalog.ChangeNewIdentity || kind == catalog.ChangeIdentityDropped {
			require.ErrorIs(t, err, store.ErrQuarantined, "writes wait for the configuration")
			require.ErrorIs(t, herr, store.ErrQuarantined)
		} else {
			require.NoError(t, err)
			require.NoError(t, herr)
		}

		r, err := a.VerifyInvariant(e.ctx)
		require.NoError(t, err)
		require.True(t, r.Healthy)
		require.Equal(t, q, r.Quarantine)
		require.Contains(t, r.String(), "quarantined")
		require.NoError(t, st.Engine().RefreshSystemTables(e.ctx, later))
		res, err = st.Query(e.ctx, `SELECT "table", quarantine FROM system.tables ORDER BY 1`)
		require.NoError(t, err)
		require.Equal(t, []any{"other", nil}, res.Rows[0])
		require.Equal(t, []any{"readings", strings.Join(q, "; ")}, res.Rows[1])
		states, err := st.SampleState(e.ctx, later)
		require.NoError(t, err)
		require.True(t, states[0].Quarantined)
		require.False(t, states[1].Quarantined)

		require.NoError(t, a.Cold().Refresh(e.ctx))
		require.Equal(t, schemaID, a.Cold().Iceberg().Schema().ID, "nothing applied to Iceberg")
		var cols int
		require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM pg_attribute WHERE attrelid = 'readings_versions'::regclass AND attnum > 0 AND NOT attisdropped`).Scan(&cols))
		require.Equal(t, meterstore.CoreColumnCount+2, cols, "nothing applied to PostgreSQL")
	}
	for _, tc := range []struct {
		name string
		mod  func(*meterstore.TableSpec)
		kind string
	}{
		{"column dropped from the configuration", func(s *meterstore.TableSpec) { s.Columns = s.Columns[:1] }, catalog.ChangeDrop},
		{"NOT NULL added", func(s *meterstore.TableSpec) { s.Columns[1].Nullable = false }, catalog.ChangeRequiredAdded},
		{"new NOT NULL column", func(s *meterstore.TableSpec) {
			s.Columns = append(s.Columns, meterstore.Column{Name: "region"})
		}, catalog.ChangeRequiredAdded},
		{"attribute made identity", func(s *meterstore.TableSpec) {
			s.Columns[1].Kind, s.Columns[1].Nullable = meterstore.Identity, false
		}, catalog.ChangeNewIdentity},
		{"identity dropped", func(s *meterstore.TableSpec) { s.Columns[0].Kind = meterstore.Attribute }, catalog.ChangeIdentityDropped},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, tenanted(tc.mod), tc.kind) })
	}

	// Undone: the declared configuration agrees again, and archival resumes.
	e.cfg.Tables = []meterstore.TableConfig{tenanted(nil), other}
	st, err := store.Open(e.ctx, e.cfg)
	require.NoError(t, err)
	a, _ = st.Table("readings_versions")
	require.Empty(t, a.SchemaState().Quarantine)
	out, err := a.Archive(e.ctx, later, 1)
	require.NoError(t, err)
	require.Len(t, out.Windows, 1)
	require.NoError(t, st.Close())

	// Another engine widens value's precision: the configured decimal(18,6) would narrow it.
	storetest.SchemaChange(t, e.ctx, a.Cold(), func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.UpdateColumn([]string{"value"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: iceberg.DecimalTypeOf(20, 6)}})
	})
	schemaID = a.Cold().Iceberg().Schema().ID
	t.Run("retype Iceberg cannot undo", func(t *testing.T) { check(t, tenanted(nil), catalog.ChangeRetype) })
}

// TestEvolveWhileRunning: a column declared through Store.Evolve while the
// store runs is read by the same engine at its next statement —
// system.resolution renders it — and written through the new handle; the
// handle taken before keeps the old declaration, which the table has
// outgrown: its archival halts rather than drop the column's values.
func TestEvolveWhileRunning(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	old, _ := e.st.Table("readings_versions")
	_, err := e.st.Append(e.ctx, mkDays(t, day0, 2, "1")...)
	require.NoError(t, err)
	_, err = e.st.Query(e.ctx, `SELECT count(region) FROM readings`)
	require.Error(t, err, "no such column yet")

	cfg := regionTable(t)
	tbl, err := e.st.Evolve(e.ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, []string{"region"}, tbl.SchemaState().Added)
	_, err = tbl.Append(e.ctx, mk(t, dl{from: day0.Add(24 * time.Hour), value: "2", version: 20260301000002, extra: map[string]string{"region": "SUED"}}))
	require.NoError(t, err)
	require.Equal(t, []any{int64(8), int64(4)}, queryRow(t, e, `SELECT count(*), count(region) FROM readings`))
	require.Equal(t, []any{cfg.ResolutionSQL()}, queryRow(t, e, `SELECT value FROM system.resolution WHERE setting = 'resolution_sql'`))
	got, _ := e.st.Table("readings_versions")
	require.Same(t, tbl, got)

	_, err = old.Archive(e.ctx, day0.Add(30*24*time.Hour), 0)
	require.ErrorIs(t, err, store.ErrQuarantined, "the old declaration would archive without region")
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	require.Equal(t, []any{int64(8), int64(4)}, queryRow(t, e, `SELECT count(*), count(region) FROM readings`))
}

func queryRow(t *testing.T, e *env, q string) []any {
	t.Helper()
	res, err := e.st.Query(e.ctx, q)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	return res.Rows[0]
}

// TestRedeclareAppliesAnotherProcessesColumn: another process adds a column
// (its store opens with the new declaration); this store's older declaration
// halts archival rather than drop the column's values, and Redeclare with the
// new declaration — what msql serve and maintenance do when the configuration
// file changes — makes this engine read the column and archival go on.
func TestRedeclareAppliesAnotherProcessesColumn(t *testing.T) {
	e := open(t, nil, intervalTable(t, nil))
	_, err := e.st.Append(e.ctx, mkDays(t, day0, 2, "1")...)
	require.NoError(t, err)

	cfg := regionTable(t)
	other := e.cfg
	other.Tables = []meterstore.TableConfig{cfg}
	st2, err := store.Open(e.ctx, other)
	require.NoError(t, err)
	tbl2, _ := st2.Table("readings_versions")
	_, err = tbl2.Append(e.ctx, mk(t, dl{from: day0.Add(24 * time.Hour), value: "2", version: 20260301000002, extra: map[string]string{"region": "SUED"}}))
	require.NoError(t, err)
	require.NoError(t, st2.Close())

	stale, _ := e.st.Table("readings_versions")
	_, err = stale.Archive(e.ctx, day0.Add(30*24*time.Hour), 0)
	require.ErrorIs(t, err, store.ErrQuarantined, "the older declaration would archive without region")

	evolved, err := e.st.Redeclare(e.ctx, []meterstore.TableConfig{cfg})
	require.NoError(t, err)
	require.Equal(t, []string{"readings_versions"}, evolved)
	require.Equal(t, []any{int64(8), int64(4)}, queryRow(t, e, `SELECT count(*), count(region) FROM readings`))
	tbl, _ := e.st.Table("readings_versions")
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))
	require.Equal(t, []any{int64(8), int64(4)}, queryRow(t, e, `SELECT count(*), count(region) FROM readings`))

	evolved, err = e.st.Redeclare(e.ctx, []meterstore.TableConfig{cfg})
	require.NoError(t, err)
	require.Empty(t, evolved, "declared as before: nothing to do")

	unknown := intervalTable(t, func(s *meterstore.TableSpec) { s.Name = "other_versions" })
	evolved, err = e.st.Redeclare(e.ctx, []meterstore.TableConfig{unknown})
	require.Empty(t, evolved)
	require.ErrorContains(t, err, "table other_versions is declared but not open: restart the process to open it")
	require.ErrorContains(t, err, "table readings_versions is open but no longer declared")
}
