package plan

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/udf"
)

// session stands in for the engine's session in the planner's tests: a
// DuckDB database with the metering functions, the system tables and the
// scan functions a rendered statement names (which bind, and read no row),
// the tables with their tiers, a view of them and the read paths. Its
// handles derive as the engine's do.
type session struct {
	db     *sql.DB
	all    []*Table // every table; tables are the ones the handle sees
	tables []*Table
	view   View
	paths  Paths
	scans  *registry
	tz     string
}

// newSession opens a session over tables in time zone tz ("" is UTC).
func newSession(t testing.TB, tz string, tables ...*Table) *session {
	t.Helper()
	if tz == "" {
		tz = DefaultTimeZone
	}
	s := &session{all: tables, tables: tables, paths: Paths{Hot: MeterHotScan, Cold: ReadParquet}, scans: &registry{}, tz: tz}
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, udf.Register(conn))
	for _, name := range []string{"meter_hot_scan", MeterColdScan} {
		require.NoError(t, duckdb.RegisterTableUDF(conn, name, s.scans.function(name)))
	}
	_, err = conn.ExecContext(ctx, "SET GLOBAL TimeZone = "+sqltext.String(tz))
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "CREATE SCHEMA memory.system")
	require.NoError(t, err)
	for name, cols := range SystemTables {
		_, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE TABLE memory.system.%s (%s)", name, cols))
		require.NoError(t, err)
	}
	s.db = db
	return s
}

// testSession is a session over testConfig's table with fixed tiers
// (nothing archived unless cold is set up), for the passes' tests.
func testSession(t testing.TB, cold *fixedCold) *session {
	t.Helper()
	if cold == nil {
		cold = &fixedCold{dir: t.TempDir()}
	}
	return newSession(t, "", &Table{Config: testConfig(t), Hot: &fixedHot{}, Cold: cold})
}

func (s *session) derive(v View) *session {
	out := *s
	out.view = v
	if v.Scope != nil {
		out.view.Scope = map[string]string{}
		for k, x := range v.Scope {
			out.view.Scope[k] = x
		}
	}
	return &out
}

func (s *session) InReadMode(m ReadMode) (*session, error) {
	if m == AsOfMode {
		return nil, errors.New("use AsOf to pin a snapshot")
	}
	v := s.view
	v.Mode, v.Snapshot, v.MaxVersion, v.AsOfTime = m, 0, nil, nil
	return s.derive(v), nil
}

func (s *session) AsOf(snapshot int64, maxVersion *uint64) *session {
	v := s.view
	v.Mode, v.Snapshot, v.AsOfTime, v.MaxVersion = AsOfMode, snapshot, nil, maxVersion
	return s.derive(v)
}

func (s *session) AsOfTime(t time.Time, maxVersion *uint64) *session {
	out := s.AsOf(0, maxVersion)
	tt := t.UTC()
	out.view.AsOfTime = &tt
	return out
}

func (s *session) AsKnownAt(t time.Time) *session {
	v := s.view
	tt := t.UTC()
	v.KnownAt = &tt
	return s.derive(v)
}

func (s *session) Scoped(column, value string) (*session, error) {
	out := s.derive(s.view)
	if out.view.Scope == nil {
		out.view.Scope = map[string]string{}
	}
	out.view.Scope[strings.ToLower(column)] = value
	out.view.Confined = true
	return out, nil
}

func (s *session) Isolated(name string) (*session, error) {
	for _, t := range s.all {
		if strings.EqualFold(t.Config.Name(), name) || strings.EqualFold(t.Config.ResolvedName(), name) {
			out := s.derive(s.view)
			out.tables = []*Table{t}
			out.view.Isolated, out.view.Confined = true, true
			return out, nil
		}
	}
	return nil, fmt.Errorf("no table %q", name)
}

// input is q with args on a connection of its own, closed when the test ends.
func (s *session) input(t testing.TB, q string, args ...any) Input {
	t.Helper()
	conn, err := s.db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return s.inputOn(conn, q, args...)
}

// inputOn is q with args on conn.
func (s *session) inputOn(conn *sql.Conn, q string, args ...any) Input {
	return Input{Conn: conn, Catalog: "memory", SQL: q, Args: args, Tables: s.tables, View: s.view, Paths: s.paths,
		Scans: s.scans, TimeZone: s.tz}
}

// planThrough parses q on s and runs the passes through the one named last.
func planThrough(t testing.TB, s *session, q, last string, args ...any) (*planning, error) {
	t.Helper()
	ctx := context.Background()
	pl, err := newPlanning(ctx, s.input(t, q, args...))
	if err != nil {
		return nil, err
	}
	t.Cleanup(pl.out.Release)
	return pl, pl.run(ctx, last)
}

// registry is the session's scan registry: tokens as the engine makes them.
type registry struct {
	mu    sync.Mutex
	scans map[string]*Scan
}

func (r *registry) Add(s *Scan) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.scans == nil {
		r.scans = map[string]*Scan{}
	}
	r.scans[tok] = s
	return tok
}

func (r *registry) Remove(tok string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.scans, tok)
}

func (r *registry) get(tok string) (*Scan, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.scans[tok]
	return s, ok
}

// function is a scan function over the registered scans: it binds a
// registered token with the table's columns (as VARCHAR: the rendered
// statement casts each) and reads no row.
func (r *registry) function(name string) duckdb.ChunkTableFunction {
	varchar, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	if err != nil {
		panic(err)
	}
	return duckdb.ChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{varchar}},
		BindArguments: func(_ map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
			tok, _ := args[0].(string)
			s, ok := r.get(tok)
			if !ok {
				return nil, fmt.Errorf("%s: unknown scan %q", name, tok)
			}
			var cols []duckdb.ColumnInfo
			for _, c := range s.Config.Columns() {
				cols = append(cols, duckdb.ColumnInfo{Name: c.Name, T: varchar})
			}
			return emptySource(cols), nil
		},
	}
}

type emptySource []duckdb.ColumnInfo

func (s emptySource) ColumnInfos() []duckdb.ColumnInfo     { return s }
func (emptySource) Cardinality() *duckdb.CardinalityInfo   { return nil }
func (emptySource) Init()                                  {}
func (emptySource) FillChunk(chunk duckdb.DataChunk) error { return chunk.SetSize(0) }

// testConfig is the table of the passes' tests.
func testConfig(t testing.TB) meterstore.TableConfig {
	cfg, err := meterstore.TableSpec{Name: "readings_versions",
		Columns: []meterstore.Column{{Name: "tenant", Kind: meterstore.Identity}, {Name: "bilanzkreis", Nullable: true}}}.Build()
	require.NoError(t, err)
	return cfg
}
