package pgwire_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// psqlTableCompletion is what psql 15 sends to complete "SELECT * FROM readings_v<TAB>".
const psqlTableCompletion = `SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p') AND (c.relname) LIKE 'readings\_v%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog') UNION ALL SELECT NULL::pg_catalog.text, n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname LIKE 'readings\_v%' AND n.nspname NOT LIKE E'pg\\_%' LIMIT 1000`

// TestPGWireProvenanceOnlyWhenAskedFor: the provenance of a statement does
// not reach a client at PostgreSQL's default client_min_messages (notice) —
// psql's tab completion and -c print nothing but the answer — and does at
// level LOG once the client lowers client_min_messages, by SET or at startup;
// SHOW meterstore.provenance answers it at any level.
func TestPGWireProvenanceOnlyWhenAskedFor(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	_, addr := f.StartPG(t, f.Users(t, settings.UserSettings{Name: "admin", Password: "pw"}))
	psql := newPsql(t, addr, "admin", "pw")

	t.Run("psql", func(t *testing.T) {
		out := psql.ok(t, nil, "-c", psqlTableCompletion)
		require.Contains(t, out, "readings_versions")
		require.NotContains(t, out, "meterstore:")
		out = psql.ok(t, nil, "-At", "-c", `SELECT count(*) FROM readings`)
		require.NotContains(t, out, "meterstore:")
		require.NotContains(t, out, "NOTICE")

		out = psql.ok(t, nil, "-At", "-c", `SET client_min_messages = log`, "-c", `SELECT count(*) FROM readings`)
		require.Contains(t, out, "LOG:  meterstore: watermark "+f.Cut.UTC().Format("2006-01-02T15:04:05Z"))
		out = psql.ok(t, nil, "-At", "-c", `SET client_min_messages TO debug1`, "-c", `SELECT count(*) FROM readings`,
			"-c", `SET client_min_messages = warning`, "-c", `SELECT count(*) FROM readings_versions`)
		require.Equal(t, 1, strings.Count(out, "LOG:  meterstore:"), "%s", out)
		out = psql.ok(t, []string{"PGOPTIONS=-c client_min_messages=log"}, "-At", "-c", `SELECT count(*) FROM readings`,
			"-c", `RESET client_min_messages`, "-c", `SELECT count(*) FROM readings`, "-c", `SHOW client_min_messages`)
		require.Equal(t, 2, strings.Count(out, "LOG:  meterstore:"), "RESET restores the startup value:\n%s", out)
		require.Contains(t, out, "\nlog\n")

		out = psql.ok(t, nil, "-At", "-c", `SELECT count(*) FROM readings`, "-c", `SHOW meterstore.provenance`)
		require.Contains(t, out, "\nwatermark "+f.Cut.UTC().Format("2006-01-02T15:04:05Z")+" · tiers cold+hot")

		out, ok := psql.run(t, nil, "-c", `SET client_min_messages = chatty`)
		require.False(t, ok)
		require.Contains(t, out, `invalid value for parameter "client_min_messages"`)
	})

	t.Run("pgx", func(t *testing.T) {
		host, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		for _, level := range []string{"", "log"} {
			cfg, err := pgx.ParseConfig("host=" + host + " port=" + port + " user=admin password=pw dbname=meterstore sslmode=disable")
			require.NoError(t, err)
			if level != "" {
				cfg.RuntimeParams["client_min_messages"] = level
			}
			var notices []*pgconn.Notice
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n) }
			c, err := pgx.ConnectConfig(ctx, cfg)
			require.NoError(t, err)
			var n int64
			require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n))
			var prov string
			require.NoError(t, c.QueryRow(ctx, `SELECT current_setting('meterstore.provenance')`).Scan(&prov))
			require.Contains(t, prov, "watermark ")
			require.NoError(t, c.Close(ctx))
			if level == "" {
				require.Empty(t, notices)
				continue
			}
			require.Len(t, notices, 2, "one for each statement")
			require.Equal(t, "LOG", notices[0].Severity)
			require.Equal(t, "meterstore: "+prov, notices[0].Message)
		}
	})
}
