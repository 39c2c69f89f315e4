package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	icecat "github.com/apache/iceberg-go/catalog"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/serve/access"
	"github.com/meterstore/meterstore/serve/flightsql"
	"github.com/meterstore/meterstore/serve/icebergrest"
	"github.com/meterstore/meterstore/serve/pgwire"
)

// Config is what Run serves. An empty address is not served.
type Config struct {
	PGWire, Flight, IcebergREST, Health string

	TLS   *tls.Config // nil: plain connections
	Log   *slog.Logger
	Users *access.Users
	// Limits and StatementTimeout bound pgwire and Flight SQL statements;
	// FlightSessionIdle expires Flight SQL tokens and prepared handles.
	Limits            access.Limits
	StatementTimeout  time.Duration
	FlightSessionIdle time.Duration

	// Catalog and Tables are what the Iceberg REST catalog publishes; Ready
	// is its /readyz (and the health server's).
	Catalog icecat.Catalog
	Tables  func() []meterstore.TableConfig
	Ready   func(ctx context.Context) error
	// HealthHandler serves the Health address (/healthz, /readyz, /metrics).
	HealthHandler http.Handler
	// Background runs beside the servers until they stop.
	Background func(ctx context.Context)
}

// Run starts every configured server, each on its own listener, and serves
// until ctx ends or one of them fails, which stops the others; it returns once
// all have stopped. A listener that cannot be opened stops the ones started.
func Run(ctx context.Context, c Config) error {
	g := &group{log: access.OrDiscard(c.Log), tls: c.TLS, auth: c.Users.Enabled()}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	g.cancel = cancel
	var startErr error
	if c.PGWire != "" {
		pg := &pgwire.Server{Users: c.Users, TLS: c.TLS, Log: c.Log, StatementTimeout: c.StatementTimeout, Limits: c.Limits}
		startErr = g.start("pgwire", c.PGWire, func(ln net.Listener) error { return pg.Serve(runCtx, ln) })
	}
	if c.Flight != "" && startErr == nil {
		fl, err := flightsql.NewServer(c.Users, c.Log)
		if err != nil {
			cancel()
			g.wg.Wait()
			return err
		}
		fl.Limits, fl.StatementTimeout, fl.SessionIdle = c.Limits, c.StatementTimeout, c.FlightSessionIdle
		startErr = g.start("flightsql", c.Flight, func(ln net.Listener) error { return fl.Serve(runCtx, ln, c.TLS) })
	}
	if c.IcebergREST != "" && startErr == nil {
		rs := &icebergrest.Server{Catalog: c.Catalog, Tables: c.Tables, Users: c.Users, Log: c.Log, Ready: c.Ready}
		startErr = g.start("iceberg-rest", c.IcebergREST, func(ln net.Listener) error { return g.http(runCtx, ln, rs.Handler()) })
	}
	if c.Health != "" && startErr == nil {
		startErr = g.start("health", c.Health, func(ln net.Listener) error { return g.http(runCtx, ln, c.HealthHandler) })
	}
	if startErr != nil {
		cancel()
		g.wg.Wait()
		return startErr
	}
	if c.Background != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			c.Background(runCtx)
		}()
	}
	<-runCtx.Done()
	g.log.Info("shutting down")
	g.wg.Wait()
	return errors.Join(g.errs...)
}

// group runs servers together: the first to fail stops the others.
type group struct {
	log    *slog.Logger
	tls    *tls.Config
	auth   bool
	cancel context.CancelFunc

	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// start listens on addr and runs run on the listener in its own goroutine.
func (g *group) start(name, addr string, run func(net.Listener) error) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	g.log.Info("listening", "server", name, "addr", ln.Addr().String(), "tls", g.tls != nil, "auth", g.auth)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := run(ln); err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, fmt.Errorf("%s: %w", name, err))
			g.mu.Unlock()
			g.cancel() // one server failing stops the others
		}
	}()
	return nil
}

// http serves h on ln (over TLS when configured) until ctx ends, then shuts
// down gracefully within 10 s.
func (g *group) http(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		hs.Shutdown(sctx)
	}()
	var err error
	if g.tls != nil {
		hs.TLSConfig = g.tls
		err = hs.ServeTLS(ln, "", "")
	} else {
		err = hs.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
