package hot

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
)

// identity is how a table names a reading: its merge key without "from"
// (malo_id, obis_code, and melo_id and the identity columns where the key has
// them). It reads those columns from a row without going through their names.
type identity struct {
	cols []string
	at   []int // per column: atMalo, atObis, atMelo, or the column's index in Row.Extra
}

const (
	atMalo = -1 - iota
	atObis
	atMelo
)

// identityOf resolves cols (identity columns, by name) against the table.
func (s *Store) identityOf(cols []string) identity {
	id := identity{cols: cols, at: make([]int, len(cols))}
	extra := s.cfg.ExtraColumns()
	for i, c := range cols {
		switch c {
		case "malo_id":
			id.at[i] = atMalo
		case "obis_code":
			id.at[i] = atObis
		case "melo_id":
			id.at[i] = atMelo
		default:
			id.at[i] = len(extra) // not declared: reads as NULL
			for j, col := range extra {
				if col.Name == c {
					id.at[i] = j
				}
			}
		}
	}
	return id
}

// value is the i-th identity column of r.
func (id identity) value(r *meterstore.Row, i int) *string {
	switch a := id.at[i]; a {
	case atMalo:
		return &r.MaloID
	case atObis:
		return &r.ObisCode
	case atMelo:
		return r.MeloID
	default:
		if a < len(r.Extra) {
			return r.Extra[a]
		}
		return nil
	}
}

func (id identity) equal(a, b *meterstore.Row) bool {
	for i := range id.at {
		x, y := id.value(a, i), id.value(b, i)
		if (x == nil) != (y == nil) || x != nil && *x != *y {
			return false
		}
	}
	return true
}

// appendKey appends r's identity as bytes that tell identities apart: each
// value length-prefixed, NULL distinct from empty.
func (id identity) appendKey(b []byte, r *meterstore.Row) []byte {
	for i := range id.at {
		v := id.value(r, i)
		if v == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(*v)))
		b = append(b, *v...)
	}
	return b
}

// appendMergeKey appends r's merge key: its identity and "from".
func (id identity) appendMergeKey(b []byte, r *meterstore.Row) []byte {
	return binary.BigEndian.AppendUint64(id.appendKey(b, r), uint64(r.From.UnixMicro()))
}

// lockBuckets is the number of advisory-lock buckets readings hash into: writers
// of the same readings serialise, so the prior state each reads is the state its
// insert lands on.
const lockBuckets = 64

// lockBucket is the bucket of a reading: FNV-1a (32 bit) of malo_id, NUL,
// obis_code, modulo lockBuckets. Every process writing a table must agree on it.
func lockBucket(r *meterstore.Row) int32 {
	return int32(LockBucket(r.MaloID, r.ObisCode))
}

// LockBucket is the advisory-lock bucket Write takes for the readings of a
// channel (malo_id and obis_code as stored: canonical). A write waits for
// every concurrent write holding one of its buckets, whatever readings they
// share — with lockBuckets buckets, two writes of a hundred channels each
// almost always share one and run one after the other. A caller writing many
// channels at once splits them by bucket (LockBucket modulo the number of
// writers) so that its writes in flight hold disjoint buckets and run side by
// side.
func LockBucket(maloID, obisCode string) int {
	h := uint32(2166136261)
	for i := 0; i < len(maloID); i++ {
		h = (h ^ uint32(maloID[i])) * 16777619
	}
	h *= 16777619 // the NUL separator: h ^ 0 == h
	for i := 0; i < len(obisCode); i++ {
		h = (h ^ uint32(obisCode[i])) * 16777619
	}
	return int(h % lockBuckets)
}

// span is the rows of one reading within one partition: the reading (as one of
// its rows) and the earliest and latest "from" among them.
type span struct {
	row    *meterstore.Row
	lo, hi time.Time
}

// batch is a batch's rows grouped for the prior-state read and the locks.
type batch struct {
	ident   identity
	rows    int
	lo, hi  time.Time // earliest and latest "from"
	spans   []span
	buckets []int32 // advisory-lock buckets, ascending
}

// group groups n rows (row(i) is the i-th) by reading and partition.
func (s *Store) group(n int, row func(int) *meterstore.Row) *batch {
	b := &batch{ident: s.identityOf(identityOf(s.cfg.MergeKey())), rows: n}
	idx := map[string]int{}
	var kb []byte
	var locked [lockBuckets]bool
	for i := 0; i < n; i++ {
		r := row(i)
		if i == 0 || r.From.Before(b.lo) {
			b.lo = r.From
		}
		if i == 0 || r.From.After(b.hi) {
			b.hi = r.From
		}
		kb = b.ident.appendKey(kb[:0], r)
		kb = binary.BigEndian.AppendUint64(kb, uint64(s.PartitionStart(r.From).UnixMicro()))
		j, ok := idx[string(kb)]
		if !ok {
			idx[string(kb)] = len(b.spans)
			b.spans = append(b.spans, span{row: r, lo: r.From, hi: r.From})
			if k := lockBucket(r); !locked[k] {
				locked[k] = true
				b.buckets = append(b.buckets, k)
			}
			continue
		}
		sp := &b.spans[j]
		if r.From.Before(sp.lo) {
			sp.lo = r.From
		}
		if r.From.After(sp.hi) {
			sp.hi = r.From
		}
	}
	slices.Sort(b.buckets)
	return b
}

// priorSQL reads every stored row (all columns, all versions) of each span's
// reading whose "from" lies within the span. For a batch of new rows — a day's
// delivery — it returns nothing, at the cost of one index probe per reading and
// partition, not one per row. For a redelivery or a correction it returns the
// stored rows classification needs, plus any other stored versions and "from"s
// in the span, which classification ignores.
//
// Each span is one index range scan on the primary key, a nested loop over the
// spans: OFFSET 0 keeps the planner from flattening the LATERAL subquery into a
// join, which it then hashes over a sequential scan of the whole partition
// (observed: 50 000 rows read to find none). The bounds of the whole batch
// prune partitions.
func (s *Store) priorSQL(b *batch) (string, []any) {
	q := meterstore.QuoteIdent
	args := make([]any, 0, len(b.ident.cols)+4)
	var unnest, alias, on []string
	for i, c := range b.ident.cols {
		vals := make([]*string, len(b.spans))
		for j := range b.spans {
			vals[j] = b.ident.value(b.spans[j].row, i)
		}
		args = append(args, vals)
		unnest = append(unnest, fmt.Sprintf("$%d::text[]", len(args)))
		alias = append(alias, fmt.Sprintf("c%d", i))
		on = append(on, fmt.Sprintf("s.%s = r.c%d", q(c), i))
	}
	los, his := make([]time.Time, len(b.spans)), make([]time.Time, len(b.spans))
	for j, sp := range b.spans {
		los[j], his[j] = sp.lo, sp.hi
	}
	args = append(args, los, his, b.lo, b.hi)
	n := len(args)
	sql := fmt.Sprintf(`SELECT p.* FROM unnest(%s, $%d::timestamptz[], $%d::timestamptz[]) AS r(%s, lo, hi)
		CROSS JOIN LATERAL (SELECT %s FROM %s AS s WHERE %s AND s."from" >= r.lo AND s."from" <= r.hi AND s."from" >= $%d AND s."from" <= $%d OFFSET 0) AS p`,
		strings.Join(unnest, ", "), n-3, n-2, strings.Join(alias, ", "),
		s.newDecoder(s.cfg.ColumnNames()).selectList("s."), q(s.cfg.Name()), strings.Join(on, " AND "), n-1, n)
	return sql, args
}

// prior is what a write's first round trip returns.
type prior struct {
	rows []meterstore.Row
	// partitionOIDs fingerprints the partition list (partitionOIDsSQL) for the
	// checks across partitions; nil when the table needs none.
	partitionOIDs []int64
	// detached names the table's detached partitions for the check across
	// tiers (checkAcrossTiers); nil when the write makes none.
	detached map[string]bool
}

// readPrior takes the readings' advisory locks and reads their prior state in
// one round trip: the statements run in order, so the read (and its snapshot)
// starts only once the locks are held. Tables that check intervals across
// partitions also read the partition fingerprint there, and writes checked
// against the cold tier the detached partitions' names.
//
// A list of detached partitions read here is the one the check across tiers
// needs at its own time, after the COPY: the prior read holds the parent
// table's ACCESS SHARE lock until the transaction ends, and a partition
// leaves the parent only by DETACH PARTITION (ClaimBelow; never CONCURRENTLY),
// which needs ACCESS EXCLUSIVE on the parent, so none is detached between
// this list and the commit; one detached before the prior read is listed, as
// each statement here reads the catalogue afresh (READ COMMITTED). A listed
// partition dropped meanwhile is handled as before (movingRows).
func (s *Store) readPrior(ctx context.Context, tx pgx.Tx, b *batch) (prior, error) {
	var p prior
	pb := &pgx.Batch{}
	pb.Queue("SELECT count(pg_advisory_xact_lock($1::int4, b)) FROM unnest($2::int4[]) AS b",
		int32(pglock.Key("readings:"+s.cfg.Name())), b.buckets)
	sql, args := s.priorSQL(b)
	pb.Queue(sql, args...)
	straddles := s.checksAcrossPartitions()
	if straddles {
		pb.Queue(partitionOIDsSQL, meterstore.QuoteIdent(s.cfg.Name()))
	}
	againstCold := s.checksAcrossTiers()
	if againstCold {
		pb.Queue(detachedNamesSQL, s.detachedNamesArgs()...)
	}
	br := tx.SendBatch(ctx, pb)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return p, fmt.Errorf("write %s: lock readings: %w", s.cfg.Name(), err)
	}
	res, err := br.Query()
	if err == nil {
		// Sized for a redelivery or a correction, which read about one stored
		// row per row: grown from empty, the rows would be copied a dozen times.
		p.rows, err = s.newDecoder(s.cfg.ColumnNames()).readAll(res, make([]meterstore.Row, 0, b.rows))
	}
	if err != nil {
		return p, fmt.Errorf("read prior state of %s: %w", s.cfg.Name(), err)
	}
	if straddles {
		if err := br.QueryRow().Scan(&p.partitionOIDs); err != nil {
			return p, fmt.Errorf("write %s: list partitions: %w", s.cfg.Name(), err)
		}
	}
	if againstCold {
		res, err := br.Query()
		if err == nil {
			p.detached, err = s.collectDetachedNames(res)
		}
		if err != nil {
			return p, fmt.Errorf("write %s: %w", s.cfg.Name(), err)
		}
	}
	if err := br.Close(); err != nil {
		return p, fmt.Errorf("write %s: %w", s.cfg.Name(), err)
	}
	return p, nil
}

// Lookup returns every stored row (all versions) of the readings the given rows
// belong to (their merge keys), in no particular order. It reads the parent table.
func (s *Store) Lookup(ctx context.Context, rows []meterstore.Row) ([]meterstore.Row, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	b := s.group(len(rows), func(i int) *meterstore.Row { return &rows[i] })
	want := make(map[string]bool, len(rows))
	var kb []byte
	for i := range rows {
		kb = b.ident.appendMergeKey(kb[:0], &rows[i])
		want[string(kb)] = true
	}
	sql, args := s.priorSQL(b)
	res, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("read prior state of %s: %w", s.cfg.Name(), err)
	}
	stored, err := s.newDecoder(s.cfg.ColumnNames()).readAll(res, nil)
	if err != nil {
		return nil, fmt.Errorf("read prior state of %s: %w", s.cfg.Name(), err)
	}
	out := stored[:0]
	for i := range stored {
		if kb = b.ident.appendMergeKey(kb[:0], &stored[i]); want[string(kb)] {
			out = append(out, stored[i])
		}
	}
	return out, nil
}
