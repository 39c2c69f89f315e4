package serve_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"meterstore"
	"meterstore/serve"
)

// TestIcebergRESTSpecAnswers: what schemathesis, driving the Iceberg REST
// OpenAPI document against the façade, found off the specification — a
// listing under a missing parent namespace is 404 (was 500), a HEAD's 404
// carries its JSON content type, and the spec's mutation-only routes answer
// 405 to every method (a GET on them was 404, a route that does not exist).
func TestIcebergRESTSpecAnswers(t *testing.T) {
	f := newFixture(t)
	srv := &serve.RESTServer{Catalog: f.s.Catalog.Iceberg(), Tables: []meterstore.TableConfig{f.s.Table().Config}, Users: f.users(t), Log: f.log}
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
}
