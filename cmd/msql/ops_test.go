package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/meterstore/meterstore/internal/promexport"
)

// TestHealthServesHeapProfileOnlyWithPprof: with pprof (msql serve --pprof)
// the health handler serves a heap profile go tool pprof reads — gzipped
// profile.proto naming inuse_space — and never the command line, which may
// carry a DSN's password; without it, none of /debug/pprof/.
func TestHealthServesHeapProfileOnlyWithPprof(t *testing.T) {
	exp, err := promexport.New("ops test")
	require.NoError(t, err)
	defer exp.Close(context.Background())

	off := httptest.NewServer((&ops{exp: exp, betweenRuns: true}).handler())
	defer off.Close()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap"} {
		code, _ := get(t, off.URL+path)
		require.Equal(t, http.StatusNotFound, code, path)
	}

	on := httptest.NewServer((&ops{exp: exp, betweenRuns: true, pprof: true}).handler())
	defer on.Close()
	code, body := get(t, on.URL+"/debug/pprof/heap?gc=1")
	require.Equal(t, http.StatusOK, code, string(body))
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err, "a heap profile is gzipped")
	proto, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Contains(t, profileStrings(t, proto), "inuse_space")

	code, _ = get(t, on.URL+"/debug/pprof/cmdline")
	require.NotEqual(t, http.StatusOK, code, "the command line is not served")
	code, _ = get(t, on.URL+"/healthz")
	require.Equal(t, http.StatusOK, code)
}

// profileStrings is the string table (field 6) of a profile.proto Profile,
// every top-level field decoded on the way.
func profileStrings(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0, "profile.proto tag")
		b = b[n:]
		if num == 6 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			require.GreaterOrEqual(t, m, 0)
			out = append(out, string(v))
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		require.GreaterOrEqual(t, m, 0, "profile.proto field %d", num)
		b = b[m:]
	}
	require.True(t, slices.Contains(out, ""), "a profile's string table starts with the empty string")
	return out
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// TestServePprofWantsHealth: --pprof serves on the --health address, so
// without one it is a usage error, before anything opens.
func TestServePprofWantsHealth(t *testing.T) {
	r := msql(t, "", "serve", "--pprof", "--pgwire", "127.0.0.1:0")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "--pprof")
}
