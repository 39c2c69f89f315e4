package icebergrest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/icebergrest"
	"github.com/meterstore/meterstore/serve/internal/servetest"
)

// TestIcebergRESTSpecAnswers: what schemathesis, driving the Iceberg REST
// OpenAPI document against the façade, found off the specification — a
// listing under a missing parent namespace is 404 (was 500), a HEAD's 404
// carries its JSON content type, and the spec's mutation-only routes answer
// 405 to every method (a GET on them was 404, a route that does not exist);
// a pageSize below the spec's minimum of 1 is a bad request (it was ignored),
// one beyond int64 is not (the spec sets no maximum);
// the views routes' 404s satisfy the spec's schema for them, ErrorModel's
// fields at the top level, and still carry the error wrapper every client
// parses.
func TestIcebergRESTSpecAnswers(t *testing.T) {
	f := servetest.New(t)
	srv := &icebergrest.Server{Catalog: f.Store.Catalog.Iceberg(), Tables: servetest.TablesOf(f.Store.Table().Config), Users: f.Users(t), Log: f.Log}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	do := func(method, path string) *http.Response {
		req, err := http.NewRequest(method, hs.URL+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	errorBody := func(resp *http.Response) map[string]any {
		var body struct{ Error map[string]any }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return body.Error
	}

	resp := do("GET", "/v1/namespaces?parent=no_such_namespace")
	require.Equal(t, 404, resp.StatusCode)
	require.Equal(t, "NoSuchNamespaceException", errorBody(resp)["type"])

	for _, path := range []string{"/v1/namespaces/no_such_namespace", "/v1/namespaces/meterstore/tables/no_such_table"} {
		resp := do("HEAD", path)
		require.Equal(t, 404, resp.StatusCode, path)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"), path)
	}

	for _, path := range []string{"/v1/tables/rename", "/v1/views/rename", "/v1/transactions/commit",
		"/v1/namespaces/meterstore/properties", "/v1/namespaces/meterstore/register",
		"/v1/namespaces/meterstore/tables/readings_versions/metrics", "/v1/namespaces/meterstore/tables/readings_versions/plan",
		"/v1/namespaces/meterstore/tables/readings_versions/tasks"} {
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			resp := do(method, path)
			require.Equal(t, 405, resp.StatusCode, "%s %s", method, path)
			require.Contains(t, resp.Header, "Allow", "%s %s", method, path)
			require.Empty(t, resp.Header.Get("Allow"), "%s %s: the route allows no method", method, path)
			require.EqualValues(t, 405, errorBody(resp)["code"], "%s %s", method, path)
		}
	}
	resp = do("POST", "/v1/namespaces")
	require.Equal(t, 405, resp.StatusCode)
	require.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))

	for _, list := range []string{"/v1/namespaces", "/v1/namespaces/meterstore/tables", "/v1/namespaces/meterstore/views"} {
		for _, size := range []string{"0", "-3", "ten", "1.5", ""} {
			resp := do("GET", list+"?pageSize="+size)
			require.Equal(t, 400, resp.StatusCode, "%s?pageSize=%s", list, size)
			e := errorBody(resp)
			require.Equal(t, "BadRequestException", e["type"], "%s?pageSize=%s", list, size)
			require.Contains(t, e["message"], "pageSize", "%s?pageSize=%s: the message names the parameter", list, size)
		}
		// Without pagination the spec says to ignore the token and answer
		// everything; the spec sets pageSize no maximum.
		for _, size := range []string{"1", "146218931117886360964083970186674176"} {
			resp := do("GET", list+"?pageSize="+size+"&pageToken=opaque")
			require.Equal(t, 200, resp.StatusCode, "%s?pageSize=%s", list, size)
		}
	}

	for _, path := range []string{"/v1/namespaces/no_such_namespace/views", "/v1/namespaces/meterstore/views/no_such_view"} {
		resp := do("GET", path)
		require.Equal(t, 404, resp.StatusCode, path)
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		for _, field := range []string{"message", "type", "code"} {
			require.Contains(t, body, field, "%s: the spec's 404 schema for the views routes is ErrorModel itself", path)
		}
		wrapped, ok := body["error"].(map[string]any)
		require.True(t, ok, "%s: %v", path, body)
		require.Equal(t, body["type"], wrapped["type"], path)
		require.Equal(t, body["message"], wrapped["message"], path)
	}
	cat, err := rest.NewCatalog(context.Background(), "facade", hs.URL)
	require.NoError(t, err)
	_, err = cat.LoadView(context.Background(), table.Identifier{"meterstore", "no_such_view"})
	require.ErrorIs(t, err, icecat.ErrNoSuchView)
	require.ErrorContains(t, err, "no_such_view", "iceberg-go's client reads the error's message")
}
