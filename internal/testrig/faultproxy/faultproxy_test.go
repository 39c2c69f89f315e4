package faultproxy

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echo is a real TCP server answering each line read with the same line.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(addr, msg string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, len(msg))
	_, err = io.ReadFull(c, buf)
	return string(buf), err
}

func TestProxyForwardsCutsDelaysAndGoesDown(t *testing.T) {
	p, err := Start(echo(t))
	require.NoError(t, err)
	defer p.Close()

	got, err := roundTrip(p.Addr(), "hello")
	require.NoError(t, err)
	require.Equal(t, "hello", got)

	p.CutAfter(3)
	_, err = roundTrip(p.Addr(), strings.Repeat("x", 10))
	require.Error(t, err, "a connection sending past the limit is cut")
	require.Equal(t, int64(1), p.Cuts())

	p.CutAfter(0)
	p.Delay(200 * time.Millisecond)
	start := time.Now()
	got, err = roundTrip(p.Addr(), "slow")
	require.NoError(t, err)
	require.Equal(t, "slow", got)
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond, "one delay each way")

	p.Down()
	_, err = roundTrip(p.Addr(), "down")
	require.Error(t, err, "nothing listens while down")
	require.NoError(t, p.Clear())
	got, err = roundTrip(p.Addr(), "up again")
	require.NoError(t, err)
	require.Equal(t, "up again", got)
}
