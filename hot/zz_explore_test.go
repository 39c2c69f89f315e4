package hot_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"meterstore"
)

func TestZZExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	ctx := context.Background()
	st, pool := newStore(t, meterstore.TableSpec{Name: "readings_versions"})
	// prefill 3 versions
	for v := uint64(1); v <= 3; v++ {
		_, err := st.Write(ctx, benchRows(20260310000000+v))
		require.NoError(t, err)
	}
	cols := st.Config().ColumnNames()
	exec := func(sql string) {
		_, err := pool.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	// variant tables
	exec(`CREATE EXTENSION IF NOT EXISTS btree_gist`)
	mk := func(name, extra string) {
		exec(fmt.Sprintf(`CREATE TABLE %s (LIKE readings_versions INCLUDING CONSTRAINTS) PARTITION BY RANGE ("from")`, name))
		exec(fmt.Sprintf(`CREATE TABLE %s_p PARTITION OF %s FOR VALUES FROM ('2026-03-09') TO ('2026-03-11')`, name, name))
		if extra != "" {
			exec(fmt.Sprintf(extra, name+"_p"))
		}
	}
	mk("v_pk", `ALTER TABLE %s ADD PRIMARY KEY (malo_id, obis_code, "from", version)`)
	H := `hashtextextended(malo_id || chr(31) || obis_code, 0)`
	pk := `ALTER TABLE %[1]s ADD PRIMARY KEY (malo_id, obis_code, "from", version);`
	US := func(c string) string {
		return `(extract(epoch from (` + c + ` - timestamptz '1970-01-01 00:00:00+00')) * 1000000)`
	}
	H53 := `((hashtextextended(malo_id || chr(31) || obis_code || chr(31) || version::text, 0) >> 11)::float8)`
	OP := `(split_part(version_scope, ':', 1)::int8)`
	mk("v_a1", pk+`ALTER TABLE %[1]s ADD CONSTRAINT %[1]s_a EXCLUDE USING gist ((`+H+`) WITH =, (version::int8) WITH =, tstzrange("from", "to") WITH &&);`)
	mk("v_a2", pk+`ALTER TABLE %[1]s ADD CONSTRAINT %[1]s_a EXCLUDE USING gist ((hashtextextended(malo_id || chr(31) || obis_code || chr(31) || version::text, 0)) WITH =, tstzrange("from", "to") WITH &&);`)
	mk("v_a3", pk+`ALTER TABLE %[1]s ADD CONSTRAINT %[1]s_a EXCLUDE USING gist ((box(point(`+US(`"from"`)+`::float8, `+H53+`), point(`+US(`"to"`)+`::float8 - 0.5, `+H53+`))) WITH &&);`)
	mk("v_b1", pk+`ALTER TABLE %[1]s ADD CONSTRAINT %[1]s_b EXCLUDE USING gist ((`+H+`) WITH =, "from" WITH =, `+OP+` WITH <>)`)
	mk("v_b2", pk+`ALTER TABLE %[1]s ADD CONSTRAINT %[1]s_b EXCLUDE USING gist ((hashtextextended(malo_id || chr(31) || obis_code, `+US(`"from"`)+`::int8)) WITH =, `+OP+` WITH <>)`)
	for _, tb := range []string{"v_pk", "v_a1", "v_a2", "v_a3", "v_b1", "v_b2"} {
		for v := uint64(1); v <= 6; v++ {
			rows := benchRows(20260310000000 + v)
			vals := copyValues(st.Config(), rows)
			t0 := time.Now()
			_, err := pool.CopyFrom(ctx, pgx.Identifier{tb}, cols, pgx.CopyFromRows(vals))
			require.NoError(t, err)
			if v >= 4 {
				t.Logf("%-8s v%d copy %v", tb, v, time.Since(t0))
			}
		}
	}
	// unnest insert into v_pk/v_none
	// Write phases on store
	for v := uint64(4); v <= 5; v++ {
		rows := benchRows(20260310000000 + v)
		t0 := time.Now()
		_, err := st.Write(ctx, rows)
		require.NoError(t, err)
		t.Logf("Write v%d %v", v, time.Since(t0))
		t0 = time.Now()
		_, err = st.Lookup(ctx, rows)
		require.NoError(t, err)
		t.Logf("Lookup %v", time.Since(t0))
	}
}
