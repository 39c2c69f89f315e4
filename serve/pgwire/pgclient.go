package pgwire

import (
	"net"
	"sync"
)

// clientReader reads a client's connection ahead of the protocol, so that a
// client going away is seen while one of its statements runs — a handler busy
// with a statement does not read its socket, and without this the statement
// would run to its end for nobody. gone is called once, when the connection
// reports EOF or an error.
//
// At most maxAhead bytes are read ahead of what the protocol has consumed (a
// client that pipelines more waits, as it would on its socket).
type clientReader struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	err  error
}

const maxAhead = 1 << 20

func watchClient(c net.Conn, gone func()) *clientReader {
	r := &clientReader{}
	r.cond = sync.NewCond(&r.mu)
	go r.fill(c, gone)
	return r
}

func (r *clientReader) fill(c net.Conn, gone func()) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := c.Read(chunk)
		r.mu.Lock()
		r.buf = append(r.buf, chunk[:n]...)
		if err != nil {
			r.err = err
		}
		r.cond.Broadcast()
		for len(r.buf) >= maxAhead && r.err == nil {
			r.cond.Wait()
		}
		r.mu.Unlock()
		if err != nil {
			gone()
			return
		}
	}
}

// Read hands the protocol what the client sent, then the error that ended
// the connection.
func (r *clientReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.buf) == 0 && r.err == nil {
		r.cond.Wait()
	}
	if len(r.buf) == 0 {
		return 0, r.err
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	if len(r.buf) == 0 {
		r.buf = nil
	}
	r.cond.Broadcast()
	return n, nil
}
