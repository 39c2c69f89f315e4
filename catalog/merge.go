package catalog

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/meterstore/meterstore"
)

// The compactor's reader: a k-way merge of data files that are each sorted by
// (malo_id, obis_code, from) — every file MeterStore writes is, and its footer
// says so — into one stream in that order. Each input is read in batches of
// mergeBatchRows through a buffered stream, so memory is a few batches and
// pages per input whatever the files hold.
const (
	mergeBatchRows   = 2048
	mergeStreamBytes = 1 << 16
)

// mergeInput is one data file read in batches, its order checked as it goes:
// the grouping of the merge — and the marks written from it — are only right
// for sorted inputs.
type mergeInput struct {
	cfg  meterstore.TableConfig
	loc  string
	f    iceio.File
	pr   *file.Reader
	rr   pqarrow.RecordReader
	rows []meterstore.Row
	pos  int
	last sortKey
	read int64
}

func openMergeInput(ctx context.Context, cfg meterstore.TableConfig, fsys iceio.IO, loc string) (*mergeInput, error) {
	f, err := fsys.Open(loc)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	in := &mergeInput{cfg: cfg, loc: loc, f: f}
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = mergeStreamBytes
	if in.pr, err = file.NewParquetReader(f, file.WithReadProps(props)); err != nil {
		in.close()
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	fr, err := pqarrow.NewFileReader(in.pr, pqarrow.ArrowReadProperties{BatchSize: mergeBatchRows}, memory.DefaultAllocator)
	if err != nil {
		in.close()
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	if in.rr, err = fr.GetRecordReader(ctx, nil, nil); err != nil {
		in.close()
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	if err := in.advance(); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// head is the input's current row, nil at its end.
func (in *mergeInput) head() *meterstore.Row {
	if in.pos < len(in.rows) {
		return &in.rows[in.pos]
	}
	return nil
}

// advance moves to the next row, reading the next batch when one is used up.
func (in *mergeInput) advance() error {
	if in.pos < len(in.rows) {
		in.pos++
	}
	for in.pos >= len(in.rows) {
		if in.rr == nil || !in.rr.Next() {
			if in.rr != nil {
				if err := in.rr.Err(); err != nil {
					return fmt.Errorf("read %s: %w", in.loc, err)
				}
			}
			in.rows, in.pos = nil, 0
			return nil
		}
		rows, err := RecordToRows(in.cfg, in.rr.RecordBatch())
		if err != nil {
			return fmt.Errorf("read %s: %w", in.loc, err)
		}
		in.rows, in.pos = rows, 0
	}
	r := &in.rows[in.pos]
	if in.read > 0 && !in.last.after(r) {
		return fmt.Errorf("%s is not sorted by (malo_id, obis_code, from): %s %s %s after %s %s %s",
			in.loc, r.MaloID, r.ObisCode, formatWatermark(r.From), in.last.malo, in.last.obis, formatWatermark(in.last.from))
	}
	in.last = sortKey{malo: r.MaloID, obis: r.ObisCode, from: r.From}
	in.read++
	return nil
}

func (in *mergeInput) close() {
	if in.rr != nil {
		in.rr.Release()
	}
	if in.pr != nil {
		_ = in.pr.Close()
	}
	_ = in.f.Close()
}

// mergeHeap orders inputs by their current row.
type mergeHeap []*mergeInput

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	a, b := h[i].head(), h[j].head()
	return compareSortKey(a, b) < 0
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeInput)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// compareSortKey orders rows by (malo_id, obis_code, from).
func compareSortKey(a, b *meterstore.Row) int {
	return cmp.Or(cmp.Compare(a.MaloID, b.MaloID), cmp.Compare(a.ObisCode, b.ObisCode), a.From.Compare(b.From))
}

// mergeGroups merges the inputs and calls emit with each group of rows that
// share (malo_id, obis_code, from), across all inputs, in that order. The
// group's slice is reused: emit must not keep it.
func mergeGroups(ctx context.Context, inputs []*mergeInput, emit func(group []meterstore.Row) error) error {
	h := make(mergeHeap, 0, len(inputs))
	for _, in := range inputs {
		if in.head() != nil {
			h = append(h, in)
		}
	}
	heap.Init(&h)
	var group []meterstore.Row
	var at sortKey
	for n := 0; len(h) > 0; n++ {
		if n%mergeBatchRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		in := h[0]
		r := in.head()
		if len(group) > 0 && (r.MaloID != at.malo || r.ObisCode != at.obis || !r.From.Equal(at.from)) {
			if err := emit(group); err != nil {
				return err
			}
			group = group[:0]
		}
		if len(group) == 0 {
			at = sortKey{malo: r.MaloID, obis: r.ObisCode, from: r.From}
		}
		group = append(group, *r)
		if err := in.advance(); err != nil {
			return err
		}
		if in.head() == nil {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	if len(group) > 0 {
		return emit(group)
	}
	return nil
}
