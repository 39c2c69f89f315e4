package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// A hot scan asks PostgreSQL only for the columns DuckDB reads: a sum over
// readings for resolution's key, version and the value; over
// readings_versions for the value alone (PostgreSQL applies the bound on
// "from", which the planner then takes out of DuckDB's WHERE) — plus the
// primary key where
// meter_hot_scan pages a pinned MaLo by keyset. PostgreSQL's statement
// log shows it, on both hot paths, and EXPLAIN names the same columns.
func TestHotScanAsksForTheColumnsItReads(t *testing.T) {
	if pgtest.Server(t) == nil {
		t.Skip("PostgreSQL's statement log is readable only on the test's own cluster")
	}
	onEachHotPath(t, func(t *testing.T, extension bool) { checkHotColumns(t, extension) })
}

// onEachHotPath runs check as a subtest per hot path: the Go path, and the
// postgres extension's where its extensions are installed (extension).
func onEachHotPath(t *testing.T, check func(t *testing.T, extension bool)) {
	paths := []string{"go"}
	if dir := extensionDirectory(t); dir != "" {
		t.Setenv(engine.EnvExtensionDirectory, dir)
		paths = append(paths, "extension")
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			t.Setenv(engine.EnvPaths, path)
			check(t, path == "extension")
		})
	}
}

func checkHotColumns(t *testing.T, extension bool) {
	ctx := context.Background()
	w := testkit.NewWorkload(33)
	w.MaLos, w.Days, w.Tenants = 3, 5, 2
	a := newArchivedStoreWith(t, w, storetest.Options{Prepare: func(dsn string) {
		conn := pgtest.Connect(t, dsn)
		var database string
		require.NoError(t, conn.QueryRow(ctx, "SELECT current_database()").Scan(&database))
		pgtest.Exec(t, conn, "ALTER DATABASE "+database+" SET log_statement = 'all'")
	}})
	cfg := a.cfg
	hot := a.cut.Add(24 * time.Hour)
	meter := a.batch.Meters[0].MaloID.String()
	keyset := slices.Concat(cfg.PrimaryKey(), []string{"value"})
	if extension { // one statement, no cursor; DuckDB filters malo_id again above it
		keyset = []string{"malo_id", "value"}
	}
	cases := []struct {
		name string
		e    *engine.Engine
		q    string
		args []any
		want []string // in the table's column order
	}{
		{"readings", a.s.Engine, `SELECT sum(value) FROM readings WHERE "from" >= $1`, []any{hot},
			slices.Concat(cfg.ResolutionKey(), []string{"version", "value"})},
		{"readings as known at", a.s.Engine.AsKnownAt(time.Now()), `SELECT sum(value) FROM readings WHERE "from" >= $1`, []any{hot},
			slices.Concat(cfg.ResolutionKey(), []string{"version", "value"})},
		{"readings_versions", a.s.Engine, `SELECT sum(value) FROM readings_versions WHERE "from" >= $1`, []any{hot},
			[]string{"value"}},
		{"one meter", a.s.Engine, `SELECT sum(value) FROM readings_versions WHERE "from" >= $1 AND malo_id = $2`, []any{hot, meter},
			keyset},
	}
	for _, c := range cases {
		want := inTableOrder(cfg, c.want)
		plan, err := c.e.Explain(ctx, c.q, c.args...)
		require.NoError(t, err)
		require.Contains(t, plan, "; PostgreSQL: SELECT "+want+" FROM ", "%s: EXPLAIN says\n%s", c.name, plan)

		received := statementsDuring(t, func() {
			_, err := c.e.Query(ctx, c.q, c.args...)
			require.NoError(t, err, c.name)
		})
		require.NotEmpty(t, received, c.name)
		for _, cols := range received {
			require.Equal(t, want, cols, "%s: PostgreSQL received SELECT %s", c.name, cols)
		}
	}
}

// inTableOrder quotes names in the table's column order, as a select list.
func inTableOrder(cfg meterstore.TableConfig, names []string) string {
	var out []string
	for _, c := range cfg.ColumnNames() {
		if slices.Contains(names, c) {
			out = append(out, meterstore.QuoteIdent(c))
		}
	}
	return strings.Join(out, ", ")
}

// hotSelect is the select list of a hot read in PostgreSQL's statement log:
// a page of meter_hot_scan, or the postgres extension's COPY of its query.
var hotSelect = regexp.MustCompile(`(?:execute [^:]+: |statement: COPY \()SELECT ([^()]+?) FROM (?:\(SELECT [^()]+ FROM )?"readings_versions`)

// statementsDuring runs f and returns the select lists of the hot reads
// PostgreSQL logged meanwhile.
func statementsDuring(t *testing.T, f func()) []string {
	log := filepath.Join(pgtest.Server(t).DataDir, "server.log")
	before, err := os.Stat(log)
	require.NoError(t, err)
	f()
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(data[before.Size():]), "\n") {
		if m := hotSelect.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}
