package pgwire

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/meterstore/meterstore/engine"
)

// archivalRetries is how often a statement that met an archival is run again
// inside the server before the client is told to retry (SQLSTATE 40001). An
// archival moves one window at a time, so a statement meets it at most once
// or twice; a third failure means something keeps moving the boundary.
const archivalRetries = 2

// An archival that moves a window from PostgreSQL to Iceberg while a statement
// reads the hot tier ends the statement with engine.ErrBoundaryMoved: its rows
// may miss the window. The statement is then run again, as long as none of its
// rows has reached the client: rows are held back (spooled, spool.go) until the
// statement has passed its boundary check, so a result of up to the spool's
// limit (256 MiB on the wire) is retried whole and the client never sees the
// archival. A longer one, and a portal executed with a row limit, is sent as
// it comes once it passes the limit; an archival after that is SQLSTATE 40001.

// startRows starts a statement's rows, running it again (at most
// archivalRetries times for the portal) when an archival moved the boundary
// while it started.
func (sess *pgSession) startRows(ctx context.Context, q string, p *pgPortal) (*engine.Rows, error) {
	for {
		rows, err := sess.eng.Rows(ctx, q, p.args...)
		if !sess.retryArchival(ctx, p, err) {
			return rows, err
		}
	}
}

// retryArchival reports whether the portal's statement, ended by err, is run
// again: err is an archival moving the boundary, no row was sent, and the
// portal has retries left.
func (sess *pgSession) retryArchival(ctx context.Context, p *pgPortal, err error) bool {
	if !errors.Is(err, engine.ErrBoundaryMoved) || p.flushed || p.retries >= archivalRetries || ctx.Err() != nil {
		return false
	}
	p.retries++
	sess.srv.log().Info("pgwire: the statement met an archival; running it again", "user", sess.user, "attempt", p.retries+1, "err", err)
	return true
}

// streamRows sends a started portal's rows (all, or maxRows then
// PortalSuspended) and its completion, running the statement again when it met
// an archival before any of its rows were sent.
func (sess *pgSession) streamRows(ctx context.Context, p *pgPortal, maxRows int64) error {
	for {
		err := sess.sendRows(ctx, p, maxRows)
		if !sess.retryArchival(ctx, p, err) {
			return err
		}
		p.spool.discard()
		p.sent, p.rows, p.finished = 0, nil, false
		if err := sess.prepare(ctx, p); err != nil {
			return err
		}
	}
}

// sendRows reads the portal's rows into DataRows, holding them back until the
// statement ends or the spool's limit is reached; from then on they are sent
// every flushRows rows.
func (sess *pgSession) sendRows(ctx context.Context, p *pgPortal, maxRows int64) error {
	rows := p.rows
	n := len(p.cols)
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	p.spool.memory = sess.srv.spoolMemory
	if p.copy != nil {
		maxRows = 0 // a copy is sent whole
		for _, msg := range sess.beginCopy(p) {
			if err := p.spool.add(msg); err != nil {
				return sess.finish(ctx, p, err)
			}
		}
	}
	var batch int64
	for {
		if maxRows > 0 && batch >= maxRows {
			if err := sess.release(p); err != nil {
				return sess.finish(ctx, p, err)
			}
			sess.be.Send(&pgproto3.PortalSuspended{})
			return nil
		}
		if !rows.Next() {
			break
		}
		if err := sess.srv.Limits.CheckRows(p.sent); err != nil {
			// the rows within the bound, as PostgreSQL sends rows before an error
			if rerr := sess.release(p); rerr != nil {
				err = rerr
			}
			return sess.finish(ctx, p, err)
		}
		for i := range vals {
			vals[i] = nil
		}
		if err := rows.Scan(ptrs...); err != nil {
			return sess.finish(ctx, p, err)
		}
		err := p.spool.addRow(func(buf []byte) ([]byte, error) { return sess.appendRow(buf, p, vals) })
		if err != nil {
			return sess.finish(ctx, p, err)
		}
		p.sent++
		batch++
		if sess.sendsNow(p) {
			if err := sess.release(p); err != nil {
				return sess.finish(ctx, p, err)
			}
			if err := sess.be.Flush(); err != nil {
				return sess.finish(ctx, p, err)
			}
		}
	}
	return sess.finish(ctx, p, nil)
}

// sendsNow reports whether the rows held back are sent now: every flushRows
// rows once the portal's rows have reached the client, and when the spool
// reaches its limit.
func (sess *pgSession) sendsNow(p *pgPortal) bool {
	if p.flushed {
		return p.sent%flushRows == 0
	}
	limit := sess.srv.spoolLimit
	if limit <= 0 {
		limit = spoolLimit
	}
	return p.spool.size() >= limit
}

// release sends the rows held back: from here on the statement cannot be run
// again unseen.
func (sess *pgSession) release(p *pgPortal) error {
	p.flushed = true
	return p.spool.sendTo(sess.be)
}
