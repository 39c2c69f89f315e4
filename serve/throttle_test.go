package serve_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	arrowsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/icebergrest"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/settings"
)

// fromAddr is a dialer whose connections leave from the loopback address ip,
// so a test can be several clients.
func fromAddr(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 30 * time.Second}
}

// pgLogin connects to addr as user from the address ip and returns the
// error and how long the login took.
func pgLogin(t *testing.T, addr, ip, user, password string) (time.Duration, error) {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=meterstore sslmode=disable", host, port, user, password))
	require.NoError(t, err)
	cfg.DialFunc = fromAddr(ip).DialContext
	start := time.Now()
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	took := time.Since(start)
	if err == nil {
		c.Close(context.Background())
	}
	return took, err
}

// TestFailedLoginsAreSlowed: a burst of wrong passwords is answered ever more
// slowly (per user and per address, doubling) on pgwire, Flight SQL and the
// REST catalog; another user from another address is not slowed, the
// attacked user is (from any address), and a successful login resets it.
func TestFailedLoginsAreSlowed(t *testing.T) {
	f := servetest.New(t)
	users := f.Users(t,
		settings.UserSettings{Name: "alice", Password: "alice-pw"},
		settings.UserSettings{Name: "bob", Password: "bob-pw"},
		settings.UserSettings{Name: "carol", Password: "carol-pw"},
		settings.UserSettings{Name: "dave", Password: "dave-pw"},
	)
	const base = 200 * time.Millisecond
	users.Throttle = access.LoginThrottle{Base: base, Max: 5 * time.Second}
	_, pgAddr := f.StartPG(t, users)

	t.Run("pgwire", func(t *testing.T) {
		start := time.Now()
		for range 5 {
			_, err := pgLogin(t, pgAddr, "127.0.0.3", "alice", "guess")
			require.Equal(t, "28P01", servetest.PGCode(err), "%v", err)
		}
		burst := time.Since(start)
		require.GreaterOrEqual(t, burst, base+2*base+4*base+8*base, "five wrong passwords: waits of 0.2, 0.4, 0.8, 1.6 s")

		took, err := pgLogin(t, pgAddr, "127.0.0.2", "bob", "bob-pw")
		require.NoError(t, err)
		require.Less(t, took, 1500*time.Millisecond, "another user from another address (alice's next wait is 3.2 s)")

		took, err = pgLogin(t, pgAddr, "127.0.0.2", "alice", "alice-pw")
		require.NoError(t, err)
		require.GreaterOrEqual(t, took, 2*time.Second, "alice is slowed from any address")

		_, err = pgLogin(t, pgAddr, "127.0.0.2", "alice", "guess")
		require.Error(t, err)
		took, err = pgLogin(t, pgAddr, "127.0.0.2", "alice", "alice-pw")
		require.NoError(t, err)
		require.Less(t, took, 2*time.Second, "the success reset the count: one failure waits 0.2 s")
	})

	t.Run("flight", func(t *testing.T) {
		addr := f.StartFlight(t, users)
		cl, err := arrowsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
				return fromAddr("127.0.0.4").DialContext(ctx, "tcp", a)
			}))
		require.NoError(t, err)
		defer cl.Close()
		start := time.Now()
		for range 3 {
			_, err := cl.Client.AuthenticateBasicToken(context.Background(), "carol", "guess")
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
		}
		require.GreaterOrEqual(t, time.Since(start), base+2*base, "three wrong passwords: waits of 0.2, 0.4 s")
	})

	t.Run("rest", func(t *testing.T) {
		srv := &icebergrest.Server{Catalog: f.Store.Catalog.Iceberg(), Tables: servetest.TablesOf(f.Store.Table().Config), Users: users, Log: f.Log}
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		hc := &http.Client{Transport: &http.Transport{DialContext: fromAddr("127.0.0.5").DialContext}}
		start := time.Now()
		for range 3 {
			req, err := http.NewRequest("GET", hs.URL+"/v1/config", nil)
			require.NoError(t, err)
			req.SetBasicAuth("dave", "guess")
			resp, err := hc.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		}
		require.GreaterOrEqual(t, time.Since(start), base+2*base, "three wrong passwords: waits of 0.2, 0.4 s")
	})
}
