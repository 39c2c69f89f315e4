package pgwire

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

// SQL cursors: DECLARE … CURSOR, FETCH, MOVE and CLOSE, what psycopg's named
// cursors, JDBC's fetch size outside autocommit and other clients use to read a
// large result in pieces. A declared cursor is a portal named after it, as in
// PostgreSQL, so the protocol's Describe and Close reach it too; its query is
// started at DECLARE (errors surface there) and streams as FETCH asks. Cursors
// scan forward only: the engine's results are streams.

// cursorDecl is a parsed DECLARE.
type cursorDecl struct {
	name   string
	query  string
	binary bool
	hold   bool
}

// cursorFetch is a parsed FETCH or MOVE: count rows forward (-1 for ALL).
type cursorFetch struct {
	name  string
	count int64
	move  bool
}

func syntaxError(format string, args ...any) error {
	return &pgError{code: "42601", msg: fmt.Sprintf(format, args...)}
}

func forwardOnly(what string) error {
	return &pgError{code: "55000", msg: fmt.Sprintf("cursor can only scan forward: %s is not supported", what),
		hint: "Fetch with NEXT, FORWARD n, FORWARD ALL, n or ALL; re-declare the cursor to start over."}
}

// parseDeclare reads DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE]
// [[NO] SCROLL] CURSOR [{WITH | WITHOUT} HOLD] FOR query.
func parseDeclare(q string) (cursorDecl, error) {
	toks := tokenize(q)
	var d cursorDecl
	if len(toks) < 2 || toks[1].word() == "" {
		return d, syntaxError("DECLARE needs a cursor name: DECLARE name CURSOR FOR SELECT …")
	}
	d.name = toks[1].word()
	i := 2
	for ; i < len(toks) && !toks[i].is("cursor"); i++ {
		switch t := toks[i]; {
		case t.is("binary"):
			d.binary = true
		case t.is("asensitive"), t.is("insensitive"):
		case t.is("no") && i+1 < len(toks) && toks[i+1].is("scroll"):
			i++
		case t.is("scroll"):
			return d, forwardOnly("SCROLL")
		default:
			return d, syntaxError("DECLARE %s: unexpected %q before CURSOR", d.name, t.text)
		}
	}
	i++
	if i+1 < len(toks) && (toks[i].is("with") || toks[i].is("without")) && toks[i+1].is("hold") {
		d.hold = toks[i].is("with")
		i += 2
	}
	if i >= len(toks) || !toks[i].is("for") {
		return d, syntaxError("DECLARE %s: expected CURSOR … FOR followed by a query", d.name)
	}
	d.query = strings.TrimRight(strings.TrimSpace(q[toks[i].end:]), "; \t\r\n")
	if kind, _ := classify(d.query); kind != kindQuery {
		return d, syntaxError("DECLARE %s: a cursor is declared for a SELECT, not %q", d.name, firstWord(d.query))
	}
	return d, nil
}

// parseFetch reads FETCH|MOVE [NEXT | FORWARD [n | ALL] | n | ALL] [FROM | IN] name.
func parseFetch(q string) (cursorFetch, error) {
	toks := tokenize(q)
	for len(toks) > 0 && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	f := cursorFetch{count: 1, move: toks[0].is("move")}
	verb := strings.ToUpper(toks[0].text)
	if len(toks) < 2 || toks[len(toks)-1].word() == "" {
		return f, syntaxError("%s needs a cursor name: %s FORWARD 100 FROM name", verb, verb)
	}
	f.name = toks[len(toks)-1].word()
	dir := toks[1 : len(toks)-1]
	if n := len(dir); n > 0 && (dir[n-1].is("from") || dir[n-1].is("in")) {
		dir = dir[:n-1]
	}
	if len(dir) > 0 && dir[0].is("forward") {
		dir = dir[1:]
	} else if len(dir) > 0 && dir[0].is("next") && len(dir) == 1 {
		return f, nil
	}
	switch {
	case len(dir) == 0:
	case len(dir) == 1 && dir[0].is("all"):
		f.count = -1
	case len(dir) == 1 && dir[0].kind == tokNumber:
		n, err := strconv.ParseInt(dir[0].text, 10, 64)
		if err != nil {
			return f, syntaxError("%s: row count %q is not a whole number", verb, dir[0].text)
		}
		if n == 0 {
			return f, forwardOnly(verb + " 0 (the current row again)")
		}
		f.count = n
	default:
		var words []string
		for _, t := range dir {
			words = append(words, t.text)
		}
		return f, forwardOnly(strings.ToUpper(strings.Join(words, " ")))
	}
	return f, nil
}

// parseClose reads CLOSE name | CLOSE ALL.
func parseClose(q string) (name string, all bool, err error) {
	toks := tokenize(q)
	for len(toks) > 0 && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) != 2 || toks[1].word() == "" {
		return "", false, syntaxError("CLOSE needs a cursor name or ALL")
	}
	return toks[1].word(), toks[1].is("all"), nil
}

// cursors lists the session's declared cursors, as pg_cursors shows them.
func (sess *pgSession) cursors() []vcursor {
	var out []vcursor
	for name, c := range sess.portals {
		if c.declared {
			out = append(out, vcursor{name: name, statement: c.decl, hold: c.hold, binary: len(c.formats) > 0, created: c.declaredAt})
		}
	}
	slices.SortFunc(out, func(a, b vcursor) int { return strings.Compare(a.name, b.name) })
	return out
}

func noCursor(name string) error {
	return &pgError{code: "34000", msg: fmt.Sprintf("cursor %q does not exist", name)}
}

// declare opens the cursor a DECLARE names, with the DECLARE's parameters.
func (sess *pgSession) declare(ctx context.Context, q string, args []any) error {
	d, err := parseDeclare(q)
	if err != nil {
		return err
	}
	if !d.hold && !sess.inTx {
		return &pgError{code: "25P01", msg: "DECLARE CURSOR can only be used in transaction blocks",
			hint: "Run BEGIN first, or declare the cursor WITH HOLD."}
	}
	if _, exists := sess.portals[d.name]; exists {
		return &pgError{code: "42P03", msg: fmt.Sprintf("cursor %q already exists", d.name)}
	}
	cur := &pgPortal{stmt: &pgStatement{sql: d.query}, args: args, declared: true, decl: q, declaredAt: time.Now(),
		hold: d.hold, tx: sess.tx}
	if d.binary {
		cur.formats = []int16{pgtype.BinaryFormatCode}
	}
	err = sess.prepare(ctx, cur)
	sess.mu.Lock()
	sess.cancelStmt = nil // a cancel request between FETCHes cancels no statement
	sess.mu.Unlock()
	if err != nil {
		cur.close()
		return err
	}
	sess.portals[d.name] = cur
	return nil
}

// readyFetch points a FETCH or MOVE portal at its cursor.
func (sess *pgSession) readyFetch(p *pgPortal) error {
	f, err := parseFetch(p.stmt.sql)
	if err != nil {
		return err
	}
	cur := sess.portals[f.name]
	if cur == nil || !cur.declared {
		return noCursor(f.name)
	}
	p.source, p.left, p.move = cur, f.count, f.move
	if !f.move {
		p.cols = cur.cols
		if len(p.formats) == 0 {
			p.formats = cur.formats
		}
	}
	return nil
}

// closeCursor runs CLOSE.
func (sess *pgSession) closeCursor(q string) error {
	name, all, err := parseClose(q)
	if err != nil {
		return err
	}
	if all {
		sess.closeCursors(func(*pgPortal) bool { return true })
		return nil
	}
	cur := sess.portals[name]
	if cur == nil || !cur.declared {
		return noCursor(name)
	}
	cur.close()
	delete(sess.portals, name)
	return nil
}

// endTransaction closes the cursors the transaction's end takes with it:
// COMMIT those declared WITHOUT HOLD, ROLLBACK also those declared in it.
func (sess *pgSession) endTransaction(rollback bool) {
	tx := sess.tx
	sess.closeCursors(func(c *pgPortal) bool { return !c.hold || rollback && c.tx == tx })
	sess.inTx = false
}

func (sess *pgSession) closeCursors(which func(*pgPortal) bool) {
	for name, c := range sess.portals {
		if c.declared && which(c) {
			c.close()
			delete(sess.portals, name)
		}
	}
}

// fetch sends a FETCH's rows from its cursor (or skips them for MOVE), at most
// maxRows of them before PortalSuspended; the cursor stays open at its new
// position until CLOSE or the end of its transaction. A row past
// max_result_rows of the cursor's statement fails the FETCH.
func (sess *pgSession) fetch(ctx context.Context, p *pgPortal, maxRows int64) error {
	cur := p.source
	if cur.stop != nil {
		sess.mu.Lock()
		sess.cancelStmt = cur.stop
		sess.mu.Unlock()
		defer func() {
			sess.mu.Lock()
			sess.cancelStmt = nil
			sess.mu.Unlock()
		}()
	}
	var batch int64
	for p.left != 0 {
		if maxRows > 0 && batch >= maxRows {
			sess.be.Send(&pgproto3.PortalSuspended{})
			return nil
		}
		vals, ok, err := sess.nextRow(ctx, cur)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		// The cursor's statement is bounded as a plain query is: by the rows
		// it yields over all its FETCHes and MOVEs.
		if err := sess.srv.Limits.CheckRows(cur.sent - 1); err != nil {
			return err
		}
		if !p.move {
			msg, err := sess.appendDataRow(nil, p, vals)
			if err != nil {
				return err
			}
			sess.be.Send(rawMessages(msg))
		}
		p.sent++
		batch++
		if p.left > 0 {
			p.left--
		}
		if p.sent%flushRows == 0 {
			if err := sess.be.Flush(); err != nil {
				return err
			}
		}
	}
	verb := "FETCH"
	if p.move {
		verb = "MOVE"
	}
	sess.be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "%s %d", verb, p.sent)})
	p.finished = true
	return nil
}

// nextRow reads a cursor's next row; ok is false at its end, where its rows
// are closed and the statement logged, with the provenance a completed query
// reports.
func (sess *pgSession) nextRow(ctx context.Context, cur *pgPortal) (vals []any, ok bool, err error) {
	if cur.finished {
		return nil, false, nil
	}
	if st := cur.static; st != nil {
		if int(cur.sent) >= len(st.rows) {
			cur.finished = true
			return nil, false, nil
		}
		cur.sent++
		return st.rows[cur.sent-1], true, nil
	}
	if !cur.rows.Next() {
		return nil, false, sess.complete(ctx, cur, nil)
	}
	if cur.scan == nil {
		cur.scan = make([]any, len(cur.cols))
	}
	ptrs := make([]any, len(cur.scan))
	for i := range cur.scan {
		cur.scan[i] = nil
		ptrs[i] = &cur.scan[i]
	}
	if err := cur.rows.Scan(ptrs...); err != nil {
		return nil, false, sess.complete(ctx, cur, err)
	}
	cur.sent++
	return cur.scan, true, nil
}
