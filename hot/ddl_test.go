package hot_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
)

func extendedSpec(name string) meterstore.TableSpec {
	eicX, err := meterstore.ParseValueCheck("EIC:X")
	if err != nil {
		panic(err)
	}
	return meterstore.TableSpec{Name: name, Columns: []meterstore.Column{
		{Name: "tenant", Kind: meterstore.Identity},
		{Name: "ingest_source", Nullable: true, Values: []string{"MSCONS", "SMGW"}},
		{Name: "bilanzkreis", Nullable: true, Check: eicX},
	}}
}

// validLiterals is one valid row of extendedSpec as SQL literals.
func validLiterals() map[string]string {
	return map[string]string{
		"malo_id": "'41373559241'", "melo_id": "'" + meloA + "'", "obis_code": "'1-0:1.29.0'", "sparte": "'STROM'",
		"from": "'2026-03-10 00:00:00+00'", "to": "'2026-03-10 00:15:00+00'", "value": "1.5", "unit": "'KWH'",
		"quality": "'MEASURED'", "resolution": "'PT15M'", "source_kind": "'MSCONS'", "source_detail": "NULL",
		"provenance": "NULL", "version": "20260310000001", "version_scope": "'" + scopeMar + "'",
		"recorded_at": "'2026-03-10 12:00:00+00'", "balancing_day": "'2026-03-10'",
		"tenant": "'t1'", "ingest_source": "'SMGW'", "bilanzkreis": "'11X0-1234567890A'",
	}
}

func rawInsert(ctx context.Context, st *hot.Store, lits map[string]string) error {
	var cols, vals []string
	for _, c := range st.Config().ColumnNames() {
		v, ok := lits[c]
		if !ok || v == "OMIT" {
			continue
		}
		cols = append(cols, meterstore.QuoteIdent(c))
		vals = append(vals, v)
	}
	_, err := st.Pool().Exec(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)",
		meterstore.QuoteIdent(st.Config().Name()), strings.Join(cols, ", "), strings.Join(vals, ", ")))
	return err
}

func TestCheckConstraintsRefuseRawSQL(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, extendedSpec("readings_versions"))

	require.NoError(t, rawInsert(ctx, st, validLiterals()), "the valid row is accepted")

	cases := []struct {
		name       string
		col, value string
		code       string // SQLSTATE
		constraint string
	}{
		{"sparte not canonical", "sparte", "'Strom'", "23514", hot.CheckSparte},
		{"sparte alias", "sparte", "'ELECTRICITY'", "23514", hot.CheckSparte},
		{"unit case", "unit", "'kWh'", "23514", hot.CheckUnit},
		{"unit unknown", "unit", "'MWH'", "23514", hot.CheckUnit},
		{"electricity in cubic metres", "unit", "'M3'", "23514", hot.CheckUnitPair},
		{"water in kWh", "sparte", "'WASSER'", "23514", hot.CheckUnitPair},
		{"quality case", "quality", "'measured'", "23514", hot.CheckQuality},
		{"quality MSCONS code", "quality", "'220'", "23514", hot.CheckQuality},
		{"resolution in seconds", "resolution", "'PT900S'", "23514", hot.CheckResolution},
		{"resolution not a grid", "resolution", "'PT7M'", "23514", hot.CheckResolution},
		{"obis with *255", "obis_code", "'1-0:1.29.0*255'", "23514", hot.CheckObis},
		{"obis zero padded", "obis_code", "'01-0:1.29.0'", "23514", hot.CheckObis},
		{"obis reduced", "obis_code", "'1.29.0'", "23514", hot.CheckObis},
		{"obis group > 255", "obis_code", "'1-0:1.256.0'", "23514", hot.CheckObis},
		{"scope month 13", "version_scope", "'" + op1 + ":2026-13'", "23514", hot.CheckVersionScope},
		{"scope 12-digit operator", "version_scope", "'991012500000:2026-03'", "23514", hot.CheckVersionScope},
		{"scope day precision", "version_scope", "'" + op1 + ":2026-03-01'", "23514", hot.CheckVersionScope},
		{"malo 10 digits", "malo_id", "'4137355924'", "23514", hot.CheckMalo},
		{"melo lower case", "melo_id", "'" + strings.ToLower(meloA) + "'", "23514", hot.CheckMelo},
		{"to before from", "to", "'2026-03-09 23:45:00+00'", "23514", hot.CheckTo},
		{"to null on interval table", "to", "NULL", "23502", ""},
		{"version zero", "version", "0", "23514", hot.CheckVersion},
		{"balancing_day omitted", "balancing_day", "OMIT", "23502", ""},
		{"coded column outside its values", "ingest_source", "'KAFKA'", "23514", hot.ExtraCheckName("ingest_source")},
		{"checked EIC:X column holding an area code", "bilanzkreis", "'11Y0-1234567890A'", "23514", hot.ExtraCheckName("bilanzkreis")},
		{"checked column lower case", "bilanzkreis", "'11x0-1234567890a'", "23514", hot.ExtraCheckName("bilanzkreis")},
		{"identity column null", "tenant", "NULL", "23502", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lits := validLiterals()
			lits["version"] = "20260310000002" // a distinct primary key, so only the rule under test can refuse
			lits[tc.col] = tc.value
			err := rawInsert(ctx, st, lits)
			var pg *pgconn.PgError
			require.True(t, errors.As(err, &pg), "want a PostgreSQL error, got %v", err)
			require.Equal(t, tc.code, pg.Code, pg.Message)
			if tc.constraint != "" {
				require.Equal(t, tc.constraint, pg.ConstraintName)
				c, ok := hot.IsCheckViolation(err)
				require.True(t, ok)
				require.Equal(t, tc.constraint, c)
			}
		})
	}
	require.Equal(t, int64(1), count(t, st))
}

// TestUnitPairCheckAddedToAnEarlierTable: a table an earlier build created
// without the unit_of_sparte CHECK gets it when the tables are created again —
// NOT VALID, so the row already there stays (msql verify reports it) and
// every row written from then on is checked.
func TestUnitPairCheckAddedToAnEarlierTable(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, extendedSpec("readings_versions"))
	_, err := pool.Exec(ctx, `ALTER TABLE readings_versions DROP CONSTRAINT unit_of_sparte`)
	require.NoError(t, err)
	lits := validLiterals()
	lits["unit"] = "'M3'"
	require.NoError(t, rawInsert(ctx, st, lits), "the earlier table admits electricity in m³")

	require.NoError(t, st.CreateTables(ctx, testNow))
	lits["version"] = "20260310000002"
	c, ok := hot.IsCheckViolation(rawInsert(ctx, st, lits))
	require.True(t, ok)
	require.Equal(t, hot.CheckUnitPair, c)
	lits["unit"] = "'KWH'"
	require.NoError(t, rawInsert(ctx, st, lits))
	require.NoError(t, st.CreateTables(ctx, testNow), "added once")
	require.Equal(t, int64(2), count(t, st))
}

func TestCheckPointTableToMustBeNull(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "meter_reads_versions", TimeModel: meterstore.Point})
	lits := validLiterals()
	lits["to"] = "NULL"
	lits["obis_code"] = "'1-0:1.8.0'"
	lits["resolution"] = "NULL"
	require.NoError(t, rawInsert(ctx, st, lits))
	lits["version"] = "20260310000002"
	lits["to"] = "'2026-03-10 00:15:00+00'"
	err := rawInsert(ctx, st, lits)
	c, ok := hot.IsCheckViolation(err)
	require.True(t, ok, "got %v", err)
	require.Equal(t, hot.CheckTo, c)
	lits["to"] = "NULL"
	lits["melo_id"] = "NULL"
	var pg *pgconn.PgError
	require.ErrorAs(t, rawInsert(ctx, st, lits), &pg)
	require.Equal(t, "23502", pg.Code, "melo_id is NOT NULL where it identifies the reading")
}

func TestCreateTablesIdempotentAndPartitioned(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	require.NoError(t, st.CreateTables(ctx, testNow))
	parts, err := st.Partitions(ctx)
	require.NoError(t, err)
	// [now - 1d, now + 14d): 15 daily partitions.
	require.Len(t, parts, 15)
	require.Equal(t, "readings_versions_2026_03_09_0000", parts[0].Name)
	require.Equal(t, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), parts[0].From)
	require.Equal(t, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), parts[0].To)
	require.Equal(t, time.Date(2026, 3, 24, 0, 0, 0, 0, time.UTC), parts[len(parts)-1].To)
	for i := 1; i < len(parts); i++ {
		require.Equal(t, parts[i-1].To, parts[i].From, "contiguous")
	}
}

func TestCreateTablesRefusesDisagreeingKey(t *testing.T) {
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	melo := true
	cfg := meterstore.TableSpec{Name: "readings_versions", IdentifyByMelo: &melo}.MustBuild()
	err := hot.New(pool, cfg).CreateTables(ctx, testNow)
	require.ErrorIs(t, err, hot.ErrSchemaMismatch)
	_ = st
}

func TestHourlyPartitions(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t, meterstore.TableSpec{Name: "readings_versions", PartitionStep: time.Hour, ArchivalStep: time.Hour,
		PartitionHeadroom: 3 * time.Hour, SettlementLag: 2 * time.Hour})
	parts, err := st.Partitions(ctx)
	require.NoError(t, err)
	require.Len(t, parts, 4)
	require.Equal(t, "readings_versions_2026_03_09_2300", parts[0].Name)
}

// A 34-character table name survives partition and constraint creation: every
// derived name stays within PostgreSQL's 63 bytes and none collide.
func TestTableNameOf34Characters(t *testing.T) {
	ctx := context.Background()
	name := "t" + strings.Repeat("x", 24) + "_versions"
	require.Len(t, name, meterstore.MaxTableNameLen)
	st, pool := newStore(t, extendedSpec(name))

	day := time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC)
	mk := func(r meterstore.Row) meterstore.Row {
		r.Extra = []*string{ptr("t1"), nil, nil}
		return r
	}
	ds, err := st.Write(ctx, []meterstore.Row{mk(qh(maloA, obisImport, day, "1", 20260312000001))})
	require.NoError(t, err)
	require.Equal(t, meterstore.Inserted, ds[0].Effect)

	part := st.PartitionName(day)
	require.Len(t, part, 50)
	rows, err := pool.Query(ctx, `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'x'`, meterstore.QuoteIdent(part))
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	sort.Strings(names)
	require.Equal(t, []string{part + "_no_overlap", part + "_one_operator"}, names)

	_, err = st.Write(ctx, []meterstore.Row{mk(iv(maloA, obisImport, day.Add(5*time.Minute), 15*time.Minute, "1", 20260312000001))})
	var oe *hot.OverlapError
	require.ErrorAs(t, err, &oe)
	r := mk(qh(maloA, obisImport, day, "1", 20260312000002))
	r.VersionScope = op2 + ":2026-03"
	_, err = st.Write(ctx, []meterstore.Row{r})
	var so *hot.SecondOperatorError
	require.ErrorAs(t, err, &so)
}
