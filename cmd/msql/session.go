package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meterstore/meterstore/engine"
)

// session runs one statement and reports how far a running one has got.
type session interface {
	// run starts stmt; the caller reads the stream and closes it. A result
	// of fewer than readAhead rows is read before run returns, and run again
	// where the session can (see engine.Cursor).
	run(ctx context.Context, readAhead int, stmt string, args ...any) (*rowStream, error)
	// progress reports on the statement running now.
	progress() *engine.Progress
}

// scratchSession is a bare DuckDB: any statement runs, unrestricted.
type scratchSession struct {
	db   *sql.DB
	prog engine.Progress
}

// run runs stmt on a connection of its own, whose progress the shell watches.
// Nothing here moves under a statement, so nothing is read ahead.
func (s *scratchSession) run(ctx context.Context, _ int, stmt string, args ...any) (*rowStream, error) {
	args, err := engine.BindArgs(ctx, s.db, stmt, args)
	if err != nil {
		return nil, err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	untrack := func() {}
	if u, err := s.prog.Track(conn); err == nil {
		untrack = u
	}
	end := func() { untrack(); conn.Close() }
	rows, err := conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		end()
		return nil, err
	}
	return sqlStream(rows, func() error {
		err := rows.Close()
		end()
		return err
	})
}

func (s *scratchSession) progress() *engine.Progress { return &s.prog }

// engineSession runs statements through the engine: queries only, split across
// the tiers, with provenance. Its view (read mode, AsOf pin, known-at instant,
// scope) is rebuilt from the deployment's engine on every change, so a scope
// given once survives every later derivation.
type engineSession struct {
	d       *deployment
	eng     *engine.Engine // the current view
	scopes  [][2]string
	mode    engine.ReadMode
	asOf    *asOfPin
	knownAt *time.Time
	prog    engine.Progress
}

type asOfPin struct {
	snapshot   int64
	at         *time.Time // pinned to the snapshot current at this instant (engine.AsOfTime)
	maxVersion *uint64
	label      string
}

// newEngineSession opens a session over d and fills the system tables
// (system.tables, system.config, system.resolution, system.snapshots,
// system.partitions) once, so they are not empty before the first .refresh.
func newEngineSession(ctx context.Context, d *deployment, scopes []string) (*engineSession, error) {
	if _, err := d.refreshSystemTables(ctx); err != nil {
		return nil, err
	}
	s := &engineSession{d: d}
	for _, sc := range scopes {
		col, val, ok := strings.Cut(sc, "=")
		if !ok {
			return nil, fmt.Errorf("%w: --scope %q: use column=value", errUsage, sc)
		}
		s.scopes = append(s.scopes, [2]string{col, val})
	}
	return s, s.rebuild()
}

// rebuild derives the current view: scope first, then read mode, pin and ceiling.
func (s *engineSession) rebuild() error {
	eng := s.d.engine
	var err error
	for _, sc := range s.scopes {
		if eng, err = eng.Scoped(sc[0], sc[1]); err != nil {
			return err
		}
	}
	if s.asOf != nil && s.asOf.at != nil {
		eng = eng.AsOfTime(*s.asOf.at, s.asOf.maxVersion)
	} else if s.asOf != nil {
		eng = eng.AsOf(s.asOf.snapshot, s.asOf.maxVersion)
	} else if eng, err = eng.InReadMode(s.mode); err != nil {
		return err
	}
	if s.knownAt != nil {
		eng = eng.AsKnownAt(*s.knownAt)
	}
	s.eng = eng
	return nil
}

// describe is the session's view in one line, for .help and the banner.
func (s *engineSession) describe() string {
	parts := []string{"mode " + s.mode.String()}
	if s.asOf != nil {
		parts[0] = "as of " + s.asOf.label
	}
	if s.knownAt != nil {
		parts = append(parts, "known at "+s.knownAt.Format(time.RFC3339))
	}
	if sc := s.eng.Scope(); len(sc) > 0 {
		parts = append(parts, "scope "+strings.Join(sc, ","))
	}
	return strings.Join(parts, " · ")
}

func (s *engineSession) progress() *engine.Progress { return &s.prog }

func (s *engineSession) run(ctx context.Context, readAhead int, stmt string, args ...any) (*rowStream, error) {
	if engine.IsExplain(stmt) {
		text, err := s.eng.Explain(ctx, stmt, args...)
		if err != nil {
			return nil, err
		}
		st := tableStream(table{columns: []string{"explain"}, rows: lines(condenseExplain(text))})
		st.plan = true
		return st, nil
	}
	c, err := s.eng.Cursor(engine.WithProgress(ctx, &s.prog), readAhead, stmt, args...)
	if err != nil {
		if hint := refusalHint(err); hint != "" {
			return nil, withHint(err, hint)
		}
		return nil, err
	}
	st := cursorStream(c)
	st.prov = c.Provenance.String()
	return st, nil
}

// refusalHint is what to do instead of a statement the session refused.
func refusalHint(err error) string {
	switch {
	case errors.Is(err, engine.ErrWrite):
		return "readings is read-only here: rows enter through the store's write path (.import FILE, INSERT INTO readings_versions SELECT … FROM read_csv(…), msql import); msql --scratch runs any DuckDB statement on scratch tables"
	case errors.Is(err, engine.ErrFileFunction):
		return "read files in msql --scratch (read_csv, read_parquet, glob); .export writes a result to a file"
	case errors.Is(err, engine.ErrUnknownRelation):
		return ".tables lists the relations"
	case errors.Is(err, engine.ErrNotAQuery):
		return "only a SELECT (or WITH … SELECT) runs here; msql --scratch runs any DuckDB statement"
	}
	return ""
}

func lines(s string) [][]any {
	var out [][]any
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, []any{l})
	}
	return out
}

// parseInstant reads a timestamp the way users type one: RFC 3339, the way
// msql prints a TIMESTAMPTZ (2026-01-31 12:00:00.5+01, DuckDB's text form),
// or a date or "date time" in UTC.
func parseInstant(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05Z07", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp; use 2026-01-31, 2026-01-31 12:00 (UTC), 2026-01-31 12:00:00+01 or RFC 3339", s)
}

func parseUint(s string) (*uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a version (yyyymmddNNNNNN)", s)
	}
	return &v, nil
}
