package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
)

// ErrHistoryOrder: a history source yielded a row out of (UTC month of
// "from", malo_id, obis_code) order. Nothing was committed.
var ErrHistoryOrder = errors.New("history rows out of (month, malo_id, obis_code) order")

// historyPageRows is about how many rows a page handed to the writer holds:
// pages end between units, so a page may hold one unit more.
const historyPageRows = 50_000

// CompareHistoryOrder orders rows as CommitHistoryFrom takes them: by the
// UTC month of "from" (the partition's month), then malo_id, then obis_code.
func CompareHistoryOrder(a, b *meterstore.Row) int {
	return unitOf(a).compare(unitOf(b))
}

// unitKey is the unit the history rules run on: one channel (malo_id,
// obis_code) in one UTC month.
type unitKey struct {
	month      int32
	malo, obis string
}

func unitOf(r *meterstore.Row) unitKey {
	return unitKey{month: monthsSinceEpoch(r.From), malo: r.MaloID, obis: r.ObisCode}
}

func (k unitKey) compare(o unitKey) int {
	return cmp.Or(cmp.Compare(k.month, o.month), strings.Compare(k.malo, o.malo), strings.Compare(k.obis, o.obis))
}

func (k unitKey) monthStart() time.Time {
	return time.Date(1970+int(k.month)/12, time.Month(k.month%12+1), 1, 0, 0, 0, 0, time.UTC)
}

// CommitHistoryFrom is CommitHistory for history too large to hold: src
// yields its rows in CompareHistoryOrder (within one channel and month in any
// order), and what is held at once is one channel's month, the pages in the
// writer's hands and the intervals that reach from one month into the next —
// not the history. Each unit (channel and month) is checked as CommitHistory
// checks all rows — the row validator, the watermark, identical redeliveries
// written once, restatements, overlaps and second operators among the rows,
// against the stored rows reaching above the watermark and against the
// earlier months' intervals reaching into it — before it is handed to the
// writer; a refusal anywhere refuses the whole history (nothing is
// committed), as a row out of order does (ErrHistoryOrder). One commit, under
// the caller's fence, as CommitHistory's.
func (t *Table) CommitHistoryFrom(ctx context.Context, f Fence, src RowSource, newWatermark time.Time) (CommitResult, int, error) {
	tbl := t.Iceberg()
	stored, err := t.storedAbove(ctx, tbl, f.Watermark, newWatermark)
	if err != nil {
		return CommitResult{}, 0, err
	}
	h := &historySource{t: t, src: src, watermark: f.Watermark, end: newWatermark, validator: t.cfg.NewRowValidator(),
		stored: map[string][]meterstore.Row{}, carried: map[string][]meterstore.Row{}}
	for _, r := range stored {
		k := channelOf(&r)
		h.stored[k] = append(h.stored[k], r)
	}
	res, err := t.commitFenced(ctx, f, "history", h, newWatermark, func() []meterstore.Row { return h.above })
	if err != nil {
		return res, 0, err
	}
	return res, h.dups, nil
}

// storedAbove reads the stored rows whose interval ends above lo and starts
// below hi: a history lies at or above the watermark lo, where only rows
// archived with a "from" below it and an end above it (a monthly value) can
// be stored.
func (t *Table) storedAbove(ctx context.Context, tbl *table.Table, lo, hi time.Time) ([]meterstore.Row, error) {
	ends := iceberg.NewOr(iceberg.GreaterThan(iceberg.Reference("to"), iceberg.Timestamp(lo.UnixMicro())),
		iceberg.NewAnd(iceberg.IsNull(iceberg.Reference("to")), iceberg.GreaterThanEqual(iceberg.Reference("from"), iceberg.Timestamp(lo.UnixMicro()))))
	return t.readFiltered(ctx, tbl, nil, iceberg.NewAnd(iceberg.LessThan(iceberg.Reference("from"), iceberg.Timestamp(hi.UnixMicro())), ends))
}

func channelOf(r *meterstore.Row) string { return r.MaloID + "\x00" + r.ObisCode }

// historySource checks a history source's rows a unit at a time and yields
// them, checked, as pages in keyset order per partition.
type historySource struct {
	t         *Table
	src       RowSource
	watermark time.Time
	end       time.Time // the history's, its new watermark
	validator interface {
		ValidateRow(*meterstore.Row) error
	}
	stored  map[string][]meterstore.Row // by channel
	carried map[string][]meterstore.Row // by channel: rows of earlier months reaching past their month
	above   []meterstore.Row            // rows reaching above end, checked against the hot tier at the commit
	key     unitKey
	unit    []meterstore.Row
	eof     bool
	dups    int
}

func (h *historySource) Next(ctx context.Context) ([]meterstore.Row, error) {
	var out []meterstore.Row
	for len(out) < historyPageRows && !h.eof {
		page, err := h.src.Next(ctx)
		if errors.Is(err, io.EOF) {
			h.eof = true
			if out, err = h.finishUnit(out); err != nil {
				return nil, err
			}
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range page {
			k := unitOf(&page[i])
			if len(h.unit) > 0 {
				switch c := k.compare(h.key); {
				case c < 0:
					r := &page[i]
					return nil, fmt.Errorf("cold table %s: history: malo %s %s at %s after malo %s %s of %s: %w",
						h.t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), h.key.malo, h.key.obis, h.key.monthStart().Format("2006-01"), ErrHistoryOrder)
				case c > 0:
					if out, err = h.finishUnit(out); err != nil {
						return nil, err
					}
				}
			}
			h.key = k
			h.unit = append(h.unit, page[i])
		}
	}
	if len(out) == 0 && h.eof {
		return nil, io.EOF
	}
	return out, nil
}

// finishUnit checks the unit's rows and appends them to out.
func (h *historySource) finishUnit(out []meterstore.Row) ([]meterstore.Row, error) {
	if len(h.unit) == 0 {
		return out, nil
	}
	t := h.t
	rows := h.unit
	h.unit = h.unit[:0]
	for i := range rows {
		r := &rows[i]
		if err := h.validator.ValidateRow(r); err != nil {
			return nil, fmt.Errorf("cold table %s: history: %w", t.cfg.Name(), err)
		}
		if r.From.Before(h.watermark) {
			return nil, fmt.Errorf("cold table %s: history: malo %s %s at %s is below the watermark %s: %w; send late corrections through Append",
				t.cfg.Name(), r.MaloID, r.ObisCode, formatWatermark(r.From), formatWatermark(h.watermark), ErrBelowWatermark)
		}
	}
	sortRowsKeyset(rows)
	rows, dups, err := t.oncePerAssertion(rows)
	if err != nil {
		return nil, err
	}
	h.dups += dups
	ch := channelOf(&rows[0])
	start, next := h.key.monthStart(), h.key.monthStart().AddDate(0, 1, 0)
	reaching := func(rs []meterstore.Row, after time.Time) []meterstore.Row {
		return slices.DeleteFunc(rs, func(r meterstore.Row) bool { return !rowEnd(&r).After(after) })
	}
	carried := reaching(h.carried[ch], start)
	against := append(slices.Clone(h.stored[ch]), carried...)
	if err := t.checkIntervals(against, rows); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	carried = reaching(carried, next)
	for i := range rows {
		if rowEnd(&rows[i]).After(next) {
			carried = append(carried, rows[i])
		}
	}
	h.above = append(h.above, ReachingAbove(rows, h.end)...)
	if len(carried) > 0 {
		h.carried[ch] = carried
	} else {
		delete(h.carried, ch)
	}
	return append(out, rows...), nil
}

// MergeHistory is src with rows merged in, in CompareHistoryOrder: rows
// PostgreSQL holds below a history's end join the history's commit in their
// channel's month.
func MergeHistory(src RowSource, rows []meterstore.Row) RowSource {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b meterstore.Row) int { return CompareHistoryOrder(&a, &b) })
	return &mergedSource{src: src, extra: rows}
}

type mergedSource struct {
	src   RowSource
	extra []meterstore.Row
	eof   bool
}

func (m *mergedSource) Next(ctx context.Context) ([]meterstore.Row, error) {
	if !m.eof {
		page, err := m.src.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			m.eof = true
		case err != nil:
			return nil, err
		case len(m.extra) == 0:
			return page, nil
		default:
			out := make([]meterstore.Row, 0, len(page))
			for i := range page {
				for len(m.extra) > 0 && CompareHistoryOrder(&m.extra[0], &page[i]) <= 0 {
					out = append(out, m.extra[0])
					m.extra = m.extra[1:]
				}
				out = append(out, page[i])
			}
			return out, nil
		}
	}
	if len(m.extra) == 0 {
		return nil, io.EOF
	}
	out := m.extra
	m.extra = nil
	return out, nil
}
