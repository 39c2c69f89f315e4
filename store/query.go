package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/metering"
)

// query is what Series and Readings share: one MaLo, narrowed by merge-key
// columns, a range on "from" and a quality set, rendered as parameterised SQL
// over the resolved relation (values bound, never concatenated) and run
// through a view. The first refused input is kept and returned by the
// terminal; with it set, t and v may be nil.
type query struct {
	v       *View
	t       *Table
	err     error
	malo    metering.MaloID
	obis    *metering.ObisCode
	melo    *metering.MeloID
	eq      []colEq
	from    time.Time
	to      time.Time
	quality []metering.Quality
}

type colEq struct{ col, val string }

func newQuery(v *View, t *Table, malo string) query {
	q := query{v: v, t: t}
	if err := t.usable(); err != nil {
		q.err = err
		return q
	}
	m, err := metering.ParseMaloID(malo)
	if err != nil {
		q.err = fmt.Errorf("read %s: %w", t.cfg.ResolvedName(), err)
		return q
	}
	q.malo = m
	return q
}

func (q *query) setObis(code string) {
	if q.err != nil {
		return
	}
	o, err := metering.ParseObis(code)
	if err != nil {
		q.err = fmt.Errorf("read %s: .Obis: %w", q.t.cfg.ResolvedName(), err)
		return
	}
	q.obis = &o
}

func (q *query) setMelo(melo string) {
	if q.err != nil {
		return
	}
	m, err := metering.ParseMeloID(melo)
	if err != nil {
		q.err = fmt.Errorf("read %s: .Melo: %w", q.t.cfg.ResolvedName(), err)
		return
	}
	q.melo = &m
}

func (q *query) setColumnEq(col, val string) {
	if q.err != nil {
		return
	}
	cfg := q.t.cfg
	switch {
	case col == "from" || col == "malo_id":
		q.err = fmt.Errorf("read %s: .ColumnEq(%q): %w: narrow %s with .Range(..) and the MaLo the read was opened for", cfg.ResolvedName(), col, ErrNotMergeKey, col)
		return
	case !cfg.IsMergeKeyColumn(col):
		q.err = fmt.Errorf("read %s: .ColumnEq(%q): %w: filtering a column outside the merge key (%s) before resolution slices a reading's version history and returns a superseded value as current; filter the result instead",
			cfg.ResolvedName(), col, ErrNotMergeKey, strings.Join(cfg.MergeKey(), ", "))
		return
	}
	if c, ok := cfg.Column(col); ok {
		v, err := c.Canonical(&val)
		if err != nil {
			q.err = fmt.Errorf("read %s: .ColumnEq: %w", cfg.ResolvedName(), err)
			return
		}
		val = *v
	}
	q.eq = append(q.eq, colEq{col, val})
}

func (q *query) setRange(from, to time.Time) {
	if q.err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		q.err = fmt.Errorf("read %s: .Range(%s, %s) is empty or reversed", q.t.cfg.ResolvedName(), from.Format(time.RFC3339), to.Format(time.RFC3339))
		return
	}
	q.from, q.to = from.UTC(), to.UTC()
}

func (q *query) setQuality(qs []metering.Quality) {
	if q.err != nil {
		return
	}
	for _, x := range qs {
		if x.IsZero() {
			q.err = fmt.Errorf("read %s: .QualityIn: unset quality", q.t.cfg.ResolvedName())
			return
		}
	}
	q.quality = append([]metering.Quality(nil), qs...)
}

// where renders the WHERE clause and its bound arguments.
func (q *query) where() (string, []any) {
	var conds []string
	var args []any
	bind := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	bind("malo_id = $%d", q.malo.String())
	if q.obis != nil {
		bind("obis_code = $%d", q.obis.String())
	}
	if q.melo != nil {
		bind("melo_id = $%d", q.melo.String())
	}
	for _, e := range q.eq {
		bind(meterstore.QuoteIdent(e.col)+" = $%d", e.val)
	}
	if !q.from.IsZero() {
		bind(`"from" >= $%d`, q.from)
	}
	if !q.to.IsZero() {
		bind(`"from" < $%d`, q.to)
	}
	if len(q.quality) > 0 {
		var ps []string
		for _, x := range q.quality {
			args = append(args, x.String())
			ps = append(ps, fmt.Sprintf("$%d", len(args)))
		}
		conds = append(conds, "quality IN ("+strings.Join(ps, ", ")+")")
	}
	return strings.Join(conds, " AND "), args
}

// relation is which of a table's two relations a read selects from.
type relation bool

const (
	resolvedRows   relation = true  // the resolved relation: the current value of every reading
	storedVersions relation = false // the unresolved one: every stored version
)

// latestOrder puts the newest instant first.
const latestOrder = `"from" DESC, obis_code, melo_id`

// selectRows runs SELECT <columns> FROM rel WHERE … ORDER BY … [LIMIT n]
// through the view and decodes every row, parsing identifiers and codes.
func (q *query) selectRows(ctx context.Context, rel relation, order string, limit int) ([]decoded, *engine.Provenance, error) {
	if q.err != nil {
		return nil, nil, q.err
	}
	name := q.t.cfg.Name()
	if rel == resolvedRows {
		name = q.t.cfg.ResolvedName()
	}
	where, args := q.where()
	sql := fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s",
		meterstore.QuoteIdents(q.t.cfg.ColumnNames()), meterstore.QuoteIdent(name), where, order)
	if limit > 0 {
		sql += fmt.Sprintf(" LIMIT %d", limit)
	}
	res, err := q.v.query(ctx, sql, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s for malo %s: %w", name, q.malo, err)
	}
	out := make([]decoded, 0, len(res.Rows))
	for _, row := range res.Rows {
		d, err := q.decode(row)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s for malo %s: %w", name, q.malo, err)
		}
		out = append(out, d)
	}
	return out, res.Provenance, nil
}

// decoded is one stored row parsed into domain types.
type decoded struct {
	malo       metering.MaloID
	melo       metering.MeloID
	obis       metering.ObisCode
	sparte     metering.Sparte
	from       time.Time
	to         *time.Time
	value      decimal.Decimal
	unit       metering.Unit
	quality    metering.Quality
	resolution metering.Resolution
	source     metering.Source
	provenance metering.Provenance
	version    metering.Version
	scope      metering.VersionScope
	recordedAt time.Time
	extra      map[string]*string
}

// decode reads one row of the whole layout (TableConfig.Columns, in order)
// into a stored row through its fields (Row.Field), then parses it.
func (q *query) decode(vals []any) (decoded, error) {
	cols := q.t.cfg.Columns()
	r := meterstore.Row{Extra: make([]*string, len(cols)-meterstore.CoreColumnCount)}
	for i, c := range cols {
		if err := setField(r.Field(i), vals[i]); err != nil {
			return decoded{}, fmt.Errorf("stored row %v: column %s: %w", vals[0], c.Name, err)
		}
	}
	return q.parse(&r)
}

// setField stores a value as the engine returns it (Normalize) in a Row field.
func setField(f, v any) error {
	if v == nil {
		switch f.(type) {
		case **string, **time.Time:
			return nil
		}
		return fmt.Errorf("%w: unexpected NULL", metering.ErrInvalid)
	}
	ok := true
	switch f := f.(type) {
	case *string:
		*f, ok = v.(string)
	case **string:
		var s string
		s, ok = v.(string)
		*f = &s
	case *time.Time:
		var t time.Time
		t, ok = v.(time.Time)
		*f = t.UTC()
	case **time.Time:
		var t time.Time
		t, ok = v.(time.Time)
		t = t.UTC()
		*f = &t
	case *decimal.Decimal:
		*f, ok = v.(decimal.Decimal)
	case *uint64:
		d, isDec := v.(decimal.Decimal)
		if !isDec || d.Sign() <= 0 || !d.BigInt().IsUint64() {
			return fmt.Errorf("not a positive version: %v", v)
		}
		*f = d.BigInt().Uint64()
	}
	if !ok {
		return fmt.Errorf("unexpected %T", v)
	}
	return nil
}

// parse turns a stored row into domain types, refusing what a write path
// could not have stored.
func (q *query) parse(r *meterstore.Row) (decoded, error) {
	d := decoded{from: r.From, to: r.To, value: r.Value, recordedAt: r.RecordedAt}
	bad := func(col string, err error) error {
		return fmt.Errorf("stored row %v: column %s: %w", r.MaloID, col, err)
	}
	var err error
	if d.malo, err = metering.ParseMaloID(r.MaloID); err != nil || d.malo.String() != r.MaloID {
		return d, bad("malo_id", errOr(err, "not canonical"))
	}
	if r.MeloID != nil {
		if d.melo, err = metering.ParseMeloID(*r.MeloID); err != nil || d.melo.String() != *r.MeloID {
			return d, bad("melo_id", errOr(err, "not canonical"))
		}
	}
	if d.obis, err = metering.ParseObis(r.ObisCode); err != nil || d.obis.String() != r.ObisCode {
		return d, bad("obis_code", errOr(err, "not canonical"))
	}
	if d.sparte, err = metering.ParseSparte(r.Sparte); err != nil {
		return d, bad("sparte", err)
	}
	if d.unit, err = metering.ParseUnit(r.Unit); err != nil {
		return d, bad("unit", err)
	}
	// Re-checked on read: PostgreSQL's constraint knows the unit list only, and
	// a foreign writer of the cold table knows neither.
	if err := d.sparte.AllowsUnit(d.unit); err != nil {
		return d, bad("unit", err)
	}
	if d.quality, err = metering.ParseQuality(r.Quality); err != nil {
		return d, bad("quality", err)
	}
	if r.Resolution != nil {
		if d.resolution, err = metering.ParseResolution(*r.Resolution); err != nil {
			return d, bad("resolution", err)
		}
	}
	if r.SourceDetail != nil {
		if err := json.Unmarshal([]byte(*r.SourceDetail), &d.source); err != nil {
			return d, bad("source_detail", err)
		}
	}
	if r.Provenance != nil {
		if err := json.Unmarshal([]byte(*r.Provenance), &d.provenance); err != nil {
			return d, bad("provenance", err)
		}
	}
	if d.version, err = metering.NewVersion(r.Version); err != nil {
		return d, bad("version", err)
	}
	if d.scope, err = metering.ParseVersionScope(r.VersionScope); err != nil {
		return d, bad("version_scope", err)
	}
	d.extra = map[string]*string{}
	for i, c := range q.t.cfg.ExtraColumns() {
		d.extra[c.Name] = r.Extra[i]
	}
	return d, nil
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: %s", metering.ErrInvalid, msg)
}

// readingOf is a decoded row's reading without its instant: the channel and the
// merge-key discriminators (melo_id where the table identifies by it, identity columns).
func (q *query) readingOf(d decoded) string {
	var b strings.Builder
	b.WriteString(d.obis.String())
	if q.t.cfg.IdentifyByMelo() {
		b.WriteString("\x00" + d.melo.String())
	}
	for _, c := range q.t.cfg.IdentityColumns() {
		b.WriteByte(0)
		if v := d.extra[c.Name]; v != nil {
			b.WriteString(*v)
		}
	}
	return b.String()
}

// checkOneReading refuses rows spanning two channels or two readings, naming
// the narrowing, and two winners for one reading (ErrInvariantViolated).
func (q *query) checkOneReading(rows []decoded, what string) error {
	if err := q.checkWinners(rows); err != nil {
		return err
	}
	if len(rows) < 2 {
		return nil
	}
	first := rows[0]
	name := q.t.cfg.ResolvedName()
	// Name the coarsest difference first: a channel, then a meter, then an identity column.
	for _, d := range rows[1:] {
		if d.obis != first.obis {
			return fmt.Errorf("%s of malo %s on %s spans two channels (%s and %s): %w; narrow the read with .Obis(..)",
				what, q.malo, name, first.obis, d.obis, ErrAmbiguousSeries)
		}
	}
	if q.t.cfg.IdentifyByMelo() {
		for _, d := range rows[1:] {
			if d.melo != first.melo {
				return fmt.Errorf("%s of malo %s on %s spans two readings (Messlokationen %s and %s): %w; narrow the read with .Melo(..)",
					what, q.malo, name, first.melo, d.melo, ErrAmbiguousSeries)
			}
		}
	}
	for _, c := range q.t.cfg.IdentityColumns() {
		for _, d := range rows[1:] {
			if !ptrEq(d.extra[c.Name], first.extra[c.Name]) {
				return fmt.Errorf("%s of malo %s on %s spans two readings (%s %s and %s): %w; narrow the read with .ColumnEq(%q, ..)",
					what, q.malo, name, c.Name, deref(first.extra[c.Name]), deref(d.extra[c.Name]), ErrAmbiguousSeries, c.Name)
			}
		}
	}
	return nil
}

// checkWinners refuses two resolved rows for one merge key: resolution
// partitions by version_scope too, so two network operators leave two winners.
func (q *query) checkWinners(rows []decoded) error {
	seen := map[string]decoded{}
	for _, d := range rows {
		k := q.readingOf(d) + "\x00" + fmt.Sprint(d.from.UnixMicro())
		if p, ok := seen[k]; ok {
			return fmt.Errorf("malo %s %s at %s on %s has two current values (version scopes %s and %s): %w; both write paths refuse a second network operator, so these rows were written with integrity constraints off or by another writer",
				q.malo, d.obis, d.from.Format(time.RFC3339), q.t.cfg.ResolvedName(), p.scope, d.scope, ErrInvariantViolated)
		}
		seen[k] = d
	}
	return nil
}

func ptrEq(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// newest returns the row of the newest contributing delivery (latest
// recorded_at, then highest version).
func newest(rows []decoded) decoded {
	n := rows[0]
	for _, d := range rows[1:] {
		if d.recordedAt.After(n.recordedAt) || d.recordedAt.Equal(n.recordedAt) && d.version.Compare(n.version) > 0 {
			n = d
		}
	}
	return n
}

// extraOf returns the declared columns of d as a map (nulls left out).
func extraOf(d decoded) map[string]string {
	out := map[string]string{}
	for k, v := range d.extra {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// channels runs SELECT DISTINCT obis_code over the resolved relation.
func (q *query) channels(ctx context.Context) ([]metering.ObisCode, error) {
	if q.err != nil {
		return nil, q.err
	}
	where, args := q.where()
	rel := q.t.cfg.ResolvedName()
	res, err := q.v.query(ctx, fmt.Sprintf("SELECT DISTINCT obis_code FROM %s WHERE %s ORDER BY obis_code", meterstore.QuoteIdent(rel), where), args...)
	if err != nil {
		return nil, fmt.Errorf("read channels of malo %s on %s: %w", q.malo, rel, err)
	}
	out := make([]metering.ObisCode, 0, len(res.Rows))
	for _, r := range res.Rows {
		s, _ := r[0].(string)
		o, err := metering.ParseObis(s)
		if err != nil || o.String() != s {
			return nil, fmt.Errorf("read channels of malo %s on %s: stored obis_code: %w", q.malo, rel, errOr(err, "not canonical"))
		}
		out = append(out, o)
	}
	return out, nil
}

const seriesOrder = `"from", obis_code, melo_id`
