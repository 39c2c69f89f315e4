package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmbeddedDefaultIsDurable: the embedded PostgreSQL holds the hot tier and
// the SQL catalog (the pointer to committed Iceberg metadata), so by default it
// runs with PostgreSQL's crash guarantees; only --throwaway trades them for speed.
func TestEmbeddedDefaultIsDurable(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "on"}, {[]string{"--throwaway"}, "off"}} {
		t.Run(strings.Join(append([]string{"flags"}, tc.args...), " "), func(t *testing.T) {
			var f deployFlags
			fs := flag.NewFlagSet("msql", flag.ContinueOnError)
			f.register(fs)
			require.NoError(t, fs.Parse(append([]string{"--home", t.TempDir()}, tc.args...)))
			d, err := f.connect(ctx, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
			require.NoError(t, err)
			defer d.Close()
			require.True(t, d.server != nil && d.server.Started, "this process started the embedded cluster")
			for _, setting := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
				var v string
				require.NoError(t, d.pool.QueryRow(ctx, "SHOW "+setting).Scan(&v))
				require.Equal(t, tc.want, v, setting)
			}
		})
	}
}
