package pgwire_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// TestPGWireAnswersAsPostgreSQL: what psycopg, pgjdbc and SQLAlchemy found
// different from PostgreSQL — column names without an alias, and division
// by zero, which DuckDB answers with NULL or infinity instead of an error.
func TestPGWireAnswersAsPostgreSQL(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	_, addr := f.StartPG(t, f.Users(t, settings.UserSettings{Name: "admin", Password: "pw"}))
	modes := map[string]pgx.QueryExecMode{"simple": pgx.QueryExecModeSimpleProtocol, "extended": pgx.QueryExecModeCacheStatement}

	t.Run("column names", func(t *testing.T) {
		for _, tc := range []struct {
			sql   string
			names []string
		}{
			{"SELECT count(*) FROM readings", []string{"count"}},
			{"SELECT sum(value), min(value), max(value), avg(value) FROM readings", []string{"sum", "min", "max", "avg"}},
			{"SELECT count(DISTINCT tenant) FROM readings", []string{"count"}},
			{"SELECT 1, 'x', 1 + 2", []string{"?column?", "?column?", "?column?"}},
			{"SELECT upper(tenant), tenant, r.malo_id FROM readings r LIMIT 1", []string{"upper", "tenant", "malo_id"}},
			{"SELECT CAST(value AS text), value::text, 1::int, CAST(1 AS bigint) FROM readings LIMIT 1", []string{"value", "value", "int4", "int8"}},
			{"SELECT CASE WHEN value > 0 THEN 1 END, coalesce(melo_id, '') FROM readings LIMIT 1", []string{"case", "coalesce"}},
			{"SELECT count(*) AS n, sum(value) s, tenant AS \"Tenant\" FROM readings GROUP BY tenant", []string{"n", "s", "Tenant"}},
			{"WITH x AS (SELECT tenant FROM readings) SELECT count(*) FROM x", []string{"count"}},
			{"SELECT date_trunc('day', \"from\") AS time, sum(value) FROM readings GROUP BY 1", []string{"time", "sum"}},
		} {
			for mode, m := range modes {
				c := servetest.PGConnect(t, addr, "admin", "pw", m, nil)
				rows, err := c.Query(ctx, tc.sql)
				require.NoError(t, err, "%s: %s", mode, tc.sql)
				var names []string
				for _, fd := range rows.FieldDescriptions() {
					names = append(names, fd.Name)
				}
				rows.Close()
				require.NoError(t, rows.Err(), tc.sql)
				require.Equal(t, tc.names, names, "%s: %s", mode, tc.sql)
			}
		}
	})

	t.Run("division by zero", func(t *testing.T) {
		for _, q := range []string{
			"SELECT 1/0", "SELECT 1 % 0", "SELECT 1.5 / 0", "SELECT 1::double precision / 0",
			"SELECT sum(value) / (count(*) - count(*)) FROM readings",
			"SELECT value / 0 FROM readings LIMIT 1", "SELECT 2 * 3 / (1 - 1) + 1",
		} {
			for mode, m := range modes {
				c := servetest.PGConnect(t, addr, "admin", "pw", m, nil)
				var v any
				err := c.QueryRow(ctx, q).Scan(&v)
				require.Error(t, err, "%s: %s answered %v", mode, q, v)
				require.Equal(t, "22012", servetest.PGCode(err), "%s: %s: %v", mode, q, err)
			}
		}
		c := servetest.PGConnect(t, addr, "admin", "pw", pgx.QueryExecModeCacheStatement, nil)
		_, err := c.Exec(ctx, "SELECT count(*) FROM no_such_table")
		require.Equal(t, "42P01", servetest.PGCode(err), "a missing relation is PostgreSQL's undefined_table, not a refused write: %v", err)
		require.Contains(t, err.Error(), `unknown relation "no_such_table"`)
		for q, want := range map[string]float64{"SELECT 7.0 / 2": 3.5, "SELECT 2 * 3 / (4 - 1) + 1": 3, "SELECT 10 % 4": 2} {
			var got float64
			require.NoError(t, c.QueryRow(ctx, q).Scan(&got), q)
			require.Equal(t, want, got, q)
		}
		var n int64
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM readings WHERE value / 2 >= 0 AND $1::int / 3 = 1", 3).Scan(&n))
		require.EqualValues(t, f.Oracle.RowCount(time.Time{}, time.Time{}), n)
	})

	t.Run("psql and psycopg catalog queries", func(t *testing.T) {
		c := servetest.PGConnect(t, addr, "admin", "pw", pgx.QueryExecModeSimpleProtocol, nil)
		strs := func(q string, args ...any) []string {
			rows, err := c.Query(ctx, q, args...)
			require.NoError(t, err, q)
			var out []string
			for rows.Next() {
				vals, err := rows.Values()
				require.NoError(t, err, q)
				out = append(out, fmt.Sprint(vals[0]))
			}
			require.NoError(t, rows.Err(), q)
			return out
		}
		// \dt lists tables: the relations are served as tables (relkind r).
		require.Equal(t, []string{"readings", "readings_versions"}, strs(`SELECT c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1`))
		// psql's tab completion of a relation and of a column.
		require.Equal(t, []string{"readings_versions"}, strs(`SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p') AND (c.relname) LIKE 'readings\_v%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog') UNION ALL SELECT NULL::pg_catalog.text, n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname LIKE 'readings\_v%' AND n.nspname NOT LIKE E'pg\\_%' LIMIT 1000`))
		require.Equal(t, []string{"balancing_day"}, strs(`SELECT a.attname, NULL::pg_catalog.text FROM pg_catalog.pg_attribute a, pg_catalog.pg_class c WHERE c.oid = a.attrelid and a.attnum > 0 and not a.attisdropped AND (a.attname) LIKE 'bal%' AND c.relname = 'readings' AND pg_catalog.pg_table_is_visible(c.oid) LIMIT 1000`))
		// psql's \d NAME footers of a table: parents and partitions.
		require.Empty(t, strs(`SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i WHERE c.oid = i.inhparent AND i.inhrelid = '16384' ORDER BY inhseqno`))
		require.Empty(t, strs(`SELECT c.oid::pg_catalog.regclass, c.relkind, inhdetachpending, pg_catalog.pg_get_expr(c.relpartbound, c.oid) FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i WHERE c.oid = i.inhrelid AND i.inhparent = '16384' ORDER BY pg_catalog.pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT', c.oid::pg_catalog.regclass::pg_catalog.text`))
		// psql's \df meter_* (psql 15): every overload of the MeterStore
		// functions, as PostgreSQL names the types; \dfa lists no aggregates.
		dfQuery := `SELECT n.nspname as "Schema",
  p.proname as "Name",
  pg_catalog.pg_get_function_result(p.oid) as "Result data type",
  pg_catalog.pg_get_function_arguments(p.oid) as "Argument data types",
 CASE p.prokind
  WHEN 'a' THEN 'agg'
  WHEN 'w' THEN 'window'
  WHEN 'p' THEN 'proc'
  ELSE 'func'
 END as "Type"
FROM pg_catalog.pg_proc p
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE p.proname OPERATOR(pg_catalog.~) '^(meter_balancing_.*)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_function_is_visible(p.oid)
ORDER BY 1, 2, 4;`
		rows, err := c.Query(ctx, dfQuery)
		require.NoError(t, err, "\\df")
		var listed []string
		for rows.Next() {
			vals, err := rows.Values()
			require.NoError(t, err)
			listed = append(listed, fmt.Sprintf("%v|%v|%v|%v|%v", vals...))
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []string{
			"public|meter_balancing_day|date|timestamp with time zone, text|func",
			"public|meter_balancing_day|date|timestamp without time zone, text|func",
			"public|meter_balancing_month|date|timestamp with time zone, text|func",
			"public|meter_balancing_month|date|timestamp without time zone, text|func",
		}, listed)
		require.Empty(t, strs(strings.Replace(dfQuery, "AND pg_catalog.pg_function_is_visible(p.oid)",
			"AND p.prokind = 'a'\n  AND pg_catalog.pg_function_is_visible(p.oid)", 1)), "\\dfa")
		// SQLAlchemy's column reflection asks for each column's sequence.
		require.Equal(t, []string{"<nil>"}, strs(`SELECT pg_catalog.pg_get_serial_sequence('"public"."readings"', 'malo_id')`))
		// SQLAlchemy's column reflection (Inspector.get_columns): every column
		// of readings, in order.
		reflect, err := os.ReadFile("testdata/sqlalchemy_reflect_columns.sql")
		require.NoError(t, err)
		d, err := f.Store.Engine.Describe(ctx, "SELECT * FROM readings")
		require.NoError(t, err)
		require.Equal(t, d.Columns, strs(string(reflect)))
		// psycopg's and SQLAlchemy's type lookup by name, as a parameter.
		e := servetest.PGConnect(t, addr, "admin", "pw", pgx.QueryExecModeCacheStatement, nil)
		// SQLAlchemy's domain reflection: none, with a parameter inside a call
		// the translation answers without its arguments.
		domains, err := e.Query(ctx, `SELECT pg_catalog.pg_type.typname AS name, pg_catalog.pg_namespace.nspname AS schema, domain_constraints.condefs, pg_catalog.pg_collation.collname
FROM pg_catalog.pg_type JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_type.typnamespace LEFT OUTER JOIN pg_catalog.pg_collation ON pg_catalog.pg_type.typcollation = pg_catalog.pg_collation.oid LEFT OUTER JOIN (SELECT pg_catalog.pg_constraint.contypid AS contypid, array_agg(pg_catalog.pg_get_constraintdef(pg_catalog.pg_constraint.oid, $1)) AS condefs, array_agg(CAST(pg_catalog.pg_constraint.conname AS TEXT)) AS connames
FROM pg_catalog.pg_constraint
WHERE pg_catalog.pg_constraint.contypid != $2::INTEGER GROUP BY pg_catalog.pg_constraint.contypid) AS domain_constraints ON pg_catalog.pg_type.oid = domain_constraints.contypid
WHERE pg_catalog.pg_type.typtype = $3::VARCHAR ORDER BY pg_catalog.pg_namespace.nspname, pg_catalog.pg_type.typname`, true, 0, "d")
		require.NoError(t, err)
		require.False(t, domains.Next())
		domains.Close()
		require.NoError(t, domains.Err())
		// The rest of SQLAlchemy's Table reflection: no primary key, unique,
		// foreign key or check constraint and no index, and the relation's
		// comment — the catalog relation's name bound as a parameter and cast
		// to regclass by the server, as PostgreSQL resolves it.
		var readingsOID uint32
		require.NoError(t, e.QueryRow(ctx, "SELECT oid FROM pg_catalog.pg_class WHERE relname = 'readings'").Scan(&readingsOID))
		comment := strs(`SELECT d.description FROM pg_catalog.pg_description d WHERE d.objoid = 'readings'::regclass AND d.objsubid = 0`)
		require.Len(t, comment, 1)
		require.Contains(t, comment[0], "resolved")
		kinds := []any{"r", "p", "f", "v", "m", "pg_catalog", "readings"}
		for _, tc := range []struct {
			file string
			args []any
			want [][]any
		}{
			{"pk_constraint", []any{1, "pg_catalog.pg_constraint", "p", readingsOID}, nil},
			{"pk_constraint", []any{1, "pg_catalog.pg_constraint", "u", readingsOID}, nil},
			{"indexes", []any{0, 1, true, 0, 1, readingsOID, "p", "u", "x"}, nil},
			{"foreign_keys", append([]any{true, "f", "pg_catalog.pg_constraint"}, kinds...), [][]any{{"readings", nil, nil, nil, nil}}},
			{"check_constraints", append([]any{true, "c", "pg_catalog.pg_constraint"}, kinds...), [][]any{{"readings", nil, nil, nil}}},
			{"table_comment", append([]any{0, "pg_catalog.pg_class"}, kinds...), [][]any{{"readings", comment[0]}}},
		} {
			q, err := os.ReadFile("testdata/sqlalchemy_reflect_" + tc.file + ".sql")
			require.NoError(t, err)
			rows, err := e.Query(ctx, string(q), tc.args...)
			require.NoError(t, err, tc.file)
			var got [][]any
			for rows.Next() {
				vals, err := rows.Values()
				require.NoError(t, err, tc.file)
				got = append(got, vals)
			}
			require.NoError(t, rows.Err(), tc.file)
			require.Equal(t, tc.want, got, tc.file)
		}
		// A parameter cast to regclass is a name or an oid, resolved when the
		// statement runs; a name the catalog lacks is PostgreSQL's error.
		for name, oid := range map[string]uint32{"readings": readingsOID, `"public"."readings"`: readingsOID,
			"pg_catalog.pg_index": 2610, "pg_class": 1259, "16384": 16384} {
			var got uint32
			require.NoError(t, e.QueryRow(ctx, "SELECT $1::regclass", name).Scan(&got), name)
			require.Equal(t, oid, got, name)
		}
		var nothing any
		err = e.QueryRow(ctx, "SELECT CAST($1 AS regclass)", "no_such_table").Scan(&nothing)
		require.Equal(t, "42P01", servetest.PGCode(err), "%v", err)
		require.Contains(t, err.Error(), `relation "no_such_table" does not exist`)
		// pg_index and pg_opclass have PostgreSQL 15's columns.
		for rel, want := range map[string]string{
			"pg_index": "indexrelid indrelid indnatts indnkeyatts indisunique indnullsnotdistinct indisprimary " +
				"indisexclusion indimmediate indisclustered indisvalid indcheckxmin indisready indislive indisreplident " +
				"indkey indcollation indclass indoption indexprs indpred",
			"pg_opclass": "oid opcmethod opcname opcnamespace opcowner opcfamily opcintype opcdefault opckeytype",
		} {
			rows, err := e.Query(ctx, "SELECT * FROM pg_catalog."+rel)
			require.NoError(t, err, rel)
			var names []string
			for _, fd := range rows.FieldDescriptions() {
				names = append(names, fd.Name)
			}
			rows.Close()
			require.NoError(t, rows.Err(), rel)
			require.Equal(t, want, strings.Join(names, " "), rel)
		}
		for name, oid := range map[string]uint32{"int4": 23, "numeric": 1700, "timestamptz": 1184, "timestamp with time zone": 1184, "pg_catalog.text": 25, "hstore": 0} {
			var got uint32
			err := e.QueryRow(ctx, `SELECT typname AS name, oid, typarray AS array_oid, oid::regtype::text AS regtype, typdelim AS delimiter FROM pg_type t WHERE t.oid = to_regtype($1) ORDER BY t.oid`, name).Scan(nil, &got, nil, nil, nil)
			if oid == 0 {
				require.ErrorIs(t, err, pgx.ErrNoRows, "%s: to_regtype is NULL for a type pg_type does not hold", name)
				continue
			}
			require.NoError(t, err, name)
			require.Equal(t, oid, got, name)
		}
	})
}
