package catalog

import (
	"context"
	"database/sql"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"strings"
	"testing"
	"time"

	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

func TestResolvedViewCreatedAndReplaced(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, err := e.cat.CreateTable(ctx, e.cfg)
	require.NoError(t, err)

	// Through iceberg-go's own SQL catalog API: listed and loadable.
	sc := e.cat.Iceberg().(*sqlcat.Catalog)
	var names []string
	for id, err := range sc.ListViews(ctx, e.cat.ident("")[:1]) {
		require.NoError(t, err)
		names = append(names, strings.Join(id, "."))
	}
	require.Equal(t, []string{"meterstore.readings"}, names)
	md, err := sc.LoadView(ctx, e.cat.ident("readings"))
	require.NoError(t, err)
	cur := md.CurrentVersion()
	require.Len(t, cur.Representations, 3)
	for _, r := range cur.Representations {
		require.Equal(t, "sql", r.Type)
		require.Equal(t, e.cfg.ResolutionSQLFor(r.Dialect), r.Sql, r.Dialect)
	}
	require.Equal(t, "meterstore.readings_versions", md.Properties()[ViewPropResolves])
	require.Equal(t, WriterVersion, md.Properties()[ViewPropWriter])
	require.Equal(t, "malo_id,obis_code,from,tenant,version_scope", md.Properties()[ViewPropMergeKey])
	require.True(t, sameColumns(md.CurrentSchema(), tb.Iceberg().Schema()), "view schema = table columns")

	v, err := e.cat.View(ctx, e.cfg)
	require.NoError(t, err)
	require.Equal(t, "readings", v.Name())
	require.Equal(t, e.cfg.ResolutionSQL(), v.DialectSQL("duckdb"))
	require.Equal(t, e.cfg.ResolutionSQL(), v.DialectSQL("trino"))
	// Spark SQL reads a double-quoted name as a string literal ("from" would be
	// the text 'from'): its representation quotes identifiers with backticks.
	require.NotContains(t, v.DialectSQL("spark"), `"`)
	require.Contains(t, v.DialectSQL("spark"), "PARTITION BY `malo_id`, `obis_code`, `from`, `tenant`, `version_scope`")
	require.Contains(t, v.DialectSQL("spark"), "FROM `readings_versions`")
	require.EqualValues(t, 1, v.VersionID)
	views, err := e.cat.Views(ctx)
	require.NoError(t, err)
	require.Len(t, views, 1)

	// Idempotent: reopening leaves the view alone.
	_, err = e.cat.Table(ctx, e.cfg)
	require.NoError(t, err)
	v2, err := e.cat.View(ctx, e.cfg)
	require.NoError(t, err)
	require.Equal(t, v.MetadataLocation, v2.MetadataLocation)

	// A merge-key change (tenant no longer an identity column) narrows the
	// table: it is quarantined, and its view goes on resolving the stored
	// rows by the stored merge key — never tenants merged.
	spec := e.cfg.Spec()
	spec.Columns[0].Kind = meterstore.Attribute
	cfg2, err := spec.Build()
	require.NoError(t, err)
	require.NotEqual(t, e.cfg.ResolutionSQL(), cfg2.ResolutionSQL())
	tb2, err := e.cat.Table(ctx, cfg2)
	require.NoError(t, err)
	_, err = tb2.Evolve(ctx)
	require.ErrorIs(t, err, ErrUnsafeSchema)
	v2, err = e.cat.View(ctx, cfg2)
	require.NoError(t, err)
	require.Equal(t, v.MetadataLocation, v2.MetadataLocation, "a quarantined table keeps its view")
	require.Equal(t, e.cfg.ResolutionSQL(), v2.DialectSQL("trino"))

	// An added column: Evolve commits it and replaces the view's SQL and schema.
	spec = e.cfg.Spec()
	spec.Columns = append(spec.Columns, meterstore.Column{Name: "region", Nullable: true})
	cfg3, err := spec.Build()
	require.NoError(t, err)
	tb3, err := e.cat.Table(ctx, cfg3)
	require.NoError(t, err)
	_, err = tb3.Evolve(ctx)
	require.NoError(t, err)
	v3, err := e.cat.View(ctx, cfg3)
	require.NoError(t, err)
	require.Equal(t, cfg3.ResolutionSQL(), v3.DialectSQL("trino"))
	require.Contains(t, v3.DialectSQL("spark"), "`region`")
	require.Greater(t, v3.VersionID, v.VersionID)
	require.Equal(t, 2, v3.Versions)
	require.True(t, sameColumns(v3.Schema, tb3.Iceberg().Schema()), "view schema = the evolved table's columns")
	md, err = sc.LoadView(ctx, e.cat.ident("readings"))
	require.NoError(t, err)
	r0 := md.CurrentVersion().Representations[0]
	require.Equal(t, cfg3.ResolutionSQLFor(r0.Dialect), r0.Sql)

	// A table created before views existed: the view is created on open.
	require.NoError(t, sc.DropView(ctx, e.cat.ident("readings")))
	_, err = e.cat.View(ctx, cfg3)
	require.ErrorIs(t, err, ErrNoView)
	_, err = e.cat.Table(ctx, cfg3)
	require.NoError(t, err)
	v4, err := e.cat.View(ctx, cfg3)
	require.NoError(t, err)
	require.Equal(t, cfg3.ResolutionSQLFor("spark"), v4.DialectSQL("spark"))

	// Purge drops the view with the table.
	require.NoError(t, e.cat.PurgeTable(ctx, e.cfg))
	_, err = e.cat.View(ctx, e.cfg)
	require.ErrorIs(t, err, ErrNoView)
}

// The view's SQL, run unmodified in a bare DuckDB over the table's data files,
// gives the resolved answer; the naive sum over the raw files does not.
func TestResolvedViewSQLInBareDuckDB(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	tb, _ := archivedTable(t, e) // 4 MaLos × 96 quarter-hours, version 1

	// Corrections: version 2 for 5 readings of malos[1].
	var corr []meterstore.Row
	for i := 0; i < 5; i++ {
		corr = append(corr, mkRow(malos[1], opA, day0.Add(time.Duration(i)*15*time.Minute), "1000.5", 2, opA))
	}
	_, err := tb.AppendCold(ctx, corr)
	require.NoError(t, err)

	// The expected answer, folded in Go: latest version per reading.
	raw := readAll(t, tb)
	require.Len(t, raw, 4*96+5)
	latest := map[string]meterstore.Row{}
	naive := decimal.Zero
	for _, r := range raw {
		naive = naive.Add(r.Value)
		k := tb.readingKey(&r) + "|" + r.VersionScope
		if w, ok := latest[k]; !ok || r.Version > w.Version {
			latest[k] = r
		}
	}
	resolved := decimal.Zero
	for _, r := range latest {
		resolved = resolved.Add(r.Value)
	}
	require.Len(t, latest, 4*96)

	v, err := e.cat.View(ctx, e.cfg)
	require.NoError(t, err)
	viewSQL := v.DialectSQL("duckdb")
	require.Equal(t, e.cfg.ResolutionSQL(), viewSQL)

	files, _, err := tb.PlanFiles(ctx, PlanRequest{})
	require.NoError(t, err)
	require.Len(t, files, 2)
	paths := make([]string, len(files))
	for i, f := range files {
		// On S3, local copies of the same objects: this DuckDB has no httpfs.
		paths[i] = sqltext.String(s3test.LocalCopy(t, f.Path))
	}

	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE VIEW `+meterstore.QuoteIdent(e.cfg.Name())+` AS SELECT * FROM read_parquet([`+strings.Join(paths, ", ")+`])`)
	require.NoError(t, err)

	var gotN int
	var gotSum string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*), CAST(sum("value") AS VARCHAR) FROM (`+viewSQL+`) AS r`).Scan(&gotN, &gotSum))
	require.Equal(t, len(latest), gotN)
	require.True(t, decimal.RequireFromString(gotSum).Equal(resolved), "resolved sum %s, DuckDB over the view SQL %s", resolved, gotSum)

	var naiveN int
	var naiveSum string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*), CAST(sum("value") AS VARCHAR) FROM `+meterstore.QuoteIdent(e.cfg.Name())).Scan(&naiveN, &naiveSum))
	require.Equal(t, len(raw), naiveN)
	require.True(t, decimal.RequireFromString(naiveSum).Equal(naive))
	require.False(t, decimal.RequireFromString(naiveSum).Equal(resolved), "the naive sum double-counts the corrected intervals")

	// Row by row: every resolved row is the latest version of its reading.
	rows, err := db.QueryContext(ctx, `SELECT "malo_id", "from", CAST("version" AS VARCHAR), CAST("value" AS VARCHAR) FROM (`+viewSQL+`) AS r`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var malo, ver, val string
		var from time.Time
		require.NoError(t, rows.Scan(&malo, &from, &ver, &val))
		if malo == malos[1] && from.Before(day0.Add(5*15*time.Minute)) {
			require.Equal(t, "2", ver)
			require.True(t, decimal.RequireFromString(val).Equal(decimal.RequireFromString("1000.5")))
		} else {
			require.Equal(t, "1", ver)
		}
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(latest), n)
}
