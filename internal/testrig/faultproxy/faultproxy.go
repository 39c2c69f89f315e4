// Package faultproxy is a TCP proxy on loopback that puts network faults
// between a client and a real server: a delay on every chunk, connections cut
// after a number of bytes sent upstream (an upload broken off halfway), or no
// listener at all (the server is down). Tests inject faults with it instead of
// mocking the server.
package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards connections from its address to a target.
type Proxy struct {
	target string
	addr   string

	delay    atomic.Int64 // nanoseconds every chunk waits, either way
	cutAfter atomic.Int64 // bytes a connection may send upstream before it is cut; 0 = no limit
	cuts     atomic.Int64 // connections cut

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Start listens on a free loopback port and forwards to target (host:port).
func Start(target string) (*Proxy, error) {
	p := &Proxy{target: target, conns: map[net.Conn]struct{}{}}
	if err := p.listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	p.addr = p.ln.Addr().String()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Delay makes every chunk, either way, wait d before it is forwarded.
func (p *Proxy) Delay(d time.Duration) { p.delay.Store(int64(d)) }

// CutAfter closes each connection once it has sent n bytes upstream (both
// sides see the connection reset); 0 lifts the limit.
func (p *Proxy) CutAfter(n int64) { p.cutAfter.Store(n) }

// Cuts is how many connections CutAfter has cut.
func (p *Proxy) Cuts() int64 { return p.cuts.Load() }

// Clear lifts every fault (and brings the proxy up if it was down).
func (p *Proxy) Clear() error {
	p.Delay(0)
	p.CutAfter(0)
	return p.Up()
}

// Down closes the listener and every open connection: the endpoint refuses
// connections until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// Up listens again on the same address.
func (p *Proxy) Up() error {
	p.mu.Lock()
	up := p.ln != nil
	p.mu.Unlock()
	if up {
		return nil
	}
	return p.listen(p.addr)
}

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.Down()
	p.wg.Wait()
}

func (p *Proxy) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		if p.ln == nil {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	if !p.track(client, true) {
		return
	}
	defer p.track(client, false)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	if !p.track(server, true) {
		return
	}
	defer p.track(server, false)
	done := make(chan struct{}, 2)
	go func() { p.pipe(server, client, true); done <- struct{}{} }()
	go func() { p.pipe(client, server, false); done <- struct{}{} }()
	<-done
	// One side ended: end both, so a cut is seen by the client and the server.
	client.Close()
	server.Close()
	<-done
}

// pipe copies src to dst chunk by chunk, applying the faults.
func (p *Proxy) pipe(dst, src net.Conn, upstream bool) {
	buf := make([]byte, 32<<10)
	var sent int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.delay.Load()); d > 0 {
				time.Sleep(d)
			}
			chunk := buf[:n]
			limit := p.cutAfter.Load()
			if upstream && limit > 0 && sent+int64(n) > limit {
				chunk = chunk[:max(0, limit-sent)]
				_, _ = dst.Write(chunk)
				p.cuts.Add(1)
				if tc, ok := src.(*net.TCPConn); ok {
					_ = tc.SetLinger(0) // reset, not a clean close
				}
				return
			}
			if _, werr := dst.Write(chunk); werr != nil {
				return
			}
			sent += int64(len(chunk))
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}
