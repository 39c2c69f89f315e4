package icebergrest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/icebergrest"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/testkit/storetest"
)

func TestIcebergREST(t *testing.T) {
	f := servetest.New(t)
	ctx := context.Background()
	users := f.Users(t,
		settings.UserSettings{Name: "admin", Password: "s3cret"},
		settings.UserSettings{Name: "alice", Password: "alice-pw", Scope: "tenant=tenant01"},
	)
	cfg := f.Store.Table().Config
	srv := &icebergrest.Server{Catalog: f.Store.Catalog.Iceberg(), Tables: servetest.TablesOf(cfg), Users: users, Log: f.Log}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	opts := []rest.Option{rest.WithCredential("admin:s3cret")}
	if s3 := f.Store.S3; s3.Endpoint != "" {
		// The façade vends no storage credentials: a client brings its own.
		opts = append(opts, rest.WithAdditionalProps(iceberg.Properties{iceio.S3EndpointURL: s3.Endpoint, iceio.S3Region: s3.Region,
			iceio.S3AccessKeyID: s3.AccessKeyID, iceio.S3SecretAccessKey: s3.SecretAccessKey.Reveal(), iceio.S3ForceVirtualAddressing: "false"}))
	}
	cat, err := rest.NewCatalog(ctx, "facade", hs.URL, opts...)
	require.NoError(t, err)

	t.Run("namespaces and tables", func(t *testing.T) {
		nss, err := cat.ListNamespaces(ctx, nil)
		require.NoError(t, err)
		require.Contains(t, nss, table.Identifier{"meterstore"})
		var names []string
		for id, err := range cat.ListTables(ctx, table.Identifier{"meterstore"}) {
			require.NoError(t, err)
			names = append(names, id[len(id)-1])
		}
		require.Contains(t, names, cfg.Name())
	})

	t.Run("list and load the resolved view", func(t *testing.T) {
		var views []string
		for id, err := range cat.ListViews(ctx, table.Identifier{"meterstore"}) {
			require.NoError(t, err)
			views = append(views, id[len(id)-1])
		}
		require.Contains(t, views, cfg.ResolvedName(), "the façade lists the Iceberg view next to the table")
		v, err := cat.LoadView(ctx, table.Identifier{"meterstore", cfg.ResolvedName()})
		require.NoError(t, err)
		dialects := map[string]bool{}
		for _, r := range v.CurrentVersion().Representations {
			require.Equal(t, cfg.ResolutionSQLFor(r.Dialect), r.Sql, "the view's SQL is the published resolution statement in the dialect's quoting")
			dialects[r.Dialect] = true
		}
		require.True(t, dialects["spark"] && dialects["trino"] && dialects["duckdb"], "%v", dialects)
	})

	t.Run("load a table and plan a scan", func(t *testing.T) {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"meterstore", cfg.Name()})
		require.NoError(t, err)
		direct := f.Store.Table().Cold.Iceberg()
		require.Equal(t, direct.MetadataLocation(), tbl.MetadataLocation())
		require.Equal(t, direct.Metadata().CurrentSnapshot().SnapshotID, tbl.Metadata().CurrentSnapshot().SnapshotID)
		tasks, err := tbl.Scan().PlanFiles(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, tasks)
		var records int64
		for _, task := range tasks {
			records += task.File.Count()
		}
		var cold int64
		res, err := f.Store.Engine.Query(ctx, `SELECT count(*) FROM readings_versions WHERE "from" < $1`, f.Cut)
		require.NoError(t, err)
		cold = res.Rows[0][0].(int64)
		require.Equal(t, cold, records, "every archived version is in the files the façade's metadata lists")
	})

	get := func(t *testing.T, method, path, user, pw string) (int, string) {
		req, err := http.NewRequest(method, hs.URL+path, strings.NewReader("{}"))
		require.NoError(t, err)
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	t.Run("mutations answer 405 with the reason", func(t *testing.T) {
		for _, m := range [][2]string{
			{"POST", "/v1/namespaces"},
			{"DELETE", "/v1/namespaces/meterstore"},
			{"POST", "/v1/namespaces/meterstore/tables"},
			{"POST", "/v1/namespaces/meterstore/tables/" + cfg.Name()},
			{"DELETE", "/v1/namespaces/meterstore/tables/" + cfg.Name()},
			{"POST", "/v1/tables/rename"},
			{"POST", "/v1/transactions/commit"},
		} {
			code, body := get(t, m[0], m[1], "admin", "s3cret")
			require.Equal(t, 405, code, "%s %s: %s", m[0], m[1], body)
			require.Contains(t, body, "MeterStore knowing")
		}
		require.Error(t, cat.DropTable(ctx, table.Identifier{"meterstore", cfg.Name()}))
		_, err := cat.LoadTable(ctx, table.Identifier{"meterstore", cfg.Name()})
		require.NoError(t, err, "the table is still there")
	})

	t.Run("no credentials in responses", func(t *testing.T) {
		code, body := get(t, "GET", "/v1/namespaces/meterstore/tables/"+cfg.Name(), "admin", "s3cret")
		require.Equal(t, 200, code)
		for _, s := range []string{"s3.access-key-id", "s3.secret-access-key", "session-token", "password"} {
			require.NotContains(t, body, s)
		}
	})

	t.Run("authentication and scope", func(t *testing.T) {
		code, _ := get(t, "GET", "/v1/namespaces", "", "")
		require.Equal(t, 401, code)
		code, _ = get(t, "GET", "/v1/namespaces", "admin", "wrong")
		require.Equal(t, 401, code)
		code, body := get(t, "GET", "/v1/namespaces", "alice", "alice-pw")
		require.Equal(t, 403, code, body)
		code, _ = get(t, "GET", "/healthz", "", "")
		require.Equal(t, 200, code)
		code, _ = get(t, "GET", "/readyz", "", "")
		require.Equal(t, 200, code)
	})

	t.Run("published resolution SQL", func(t *testing.T) {
		code, body := get(t, "GET", "/v1/meterstore/resolution/"+cfg.Name(), "admin", "s3cret")
		require.Equal(t, 200, code)
		require.Equal(t, cfg.ResolutionSQL(), strings.TrimSpace(body))
		code, body = get(t, "GET", "/v1/meterstore/resolution/"+cfg.ResolvedName()+"?format=json", "admin", "s3cret")
		require.Equal(t, 200, code)
		require.Contains(t, body, "resolution_sql")
	})
}

var _ = icebergrest.ReasonNoWrites

// TestRESTFacadeOnObjectStore: for a warehouse on S3 the façade answers the
// table's s3:// locations — metadata file, manifests, data files — and hands
// out no credentials: its config is empty and neither key appears anywhere in
// what it sends.
func TestRESTFacadeOnObjectStore(t *testing.T) {
	f := servetest.NewWith(t, storetest.Options{ObjectStore: true})
	cfg := f.Store.Table().Config
	users := f.Users(t, settings.UserSettings{Name: "admin", Password: "admin-pw"})
	srv := &icebergrest.Server{Catalog: f.Store.Catalog.Iceberg(), Tables: servetest.TablesOf(cfg), Users: users, Log: f.Log}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	var bodies []string
	for _, path := range []string{"/v1/config", "/v1/namespaces/meterstore", "/v1/namespaces/meterstore/tables/" + cfg.Name()} {
		req, err := http.NewRequest(http.MethodGet, hs.URL+path, nil)
		require.NoError(t, err)
		req.SetBasicAuth("admin", "admin-pw")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		bodies = append(bodies, string(body))
	}
	var loaded struct {
		MetadataLocation string            `json:"metadata-location"`
		Config           map[string]string `json:"config"`
		Metadata         struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal([]byte(bodies[2]), &loaded))
	require.True(t, strings.HasPrefix(loaded.MetadataLocation, f.Store.Warehouse+"/"), "%s under %s", loaded.MetadataLocation, f.Store.Warehouse)
	require.True(t, strings.HasPrefix(loaded.Metadata.Location, "s3://"), loaded.Metadata.Location)
	require.Empty(t, loaded.Config, "the façade vends no storage credentials")
	for _, b := range bodies {
		require.NotContains(t, b, f.Store.S3.SecretAccessKey.Reveal())
		require.NotContains(t, b, f.Store.S3.AccessKeyID)
	}
}
