package pgwire_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/internal/servetest"
	"github.com/meterstore/meterstore/serve/pgwire"
	"github.com/meterstore/meterstore/settings"
)

func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestPGWireTLSAndListenRule(t *testing.T) {
	require.Error(t, access.CheckListen("0.0.0.0:5433", nil))
	require.Error(t, access.CheckListen("10.1.2.3:5433", nil))
	require.NoError(t, access.CheckListen("127.0.0.1:5433", nil))
	require.NoError(t, access.CheckListen("[::1]:5433", nil))

	f := servetest.New(t)
	users := f.Users(t, settings.UserSettings{Name: "admin", Password: "s3cret"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &pgwire.Server{Users: users, TLS: selfSigned(t), Log: f.Log}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	host, port, _ := strings.Cut(ln.Addr().String(), ":")
	c, err := pgx.Connect(ctx, "host="+host+" port="+port+" user=admin password=s3cret dbname=x sslmode=require")
	require.NoError(t, err)
	defer c.Close(ctx)
	_, isTLS := c.PgConn().Conn().(*tls.Conn)
	require.True(t, isTLS)
	var n int64
	require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM readings`).Scan(&n))
	require.Greater(t, n, int64(0))
}
