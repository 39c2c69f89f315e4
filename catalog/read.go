package catalog

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
)

// ReadRows reads the rows matching req (row-level filtered, not just file-pruned)
// through iceberg-go's reader. For corrections, checks and tests; the engine
// reads the planned files with DuckDB instead.
func (t *Table) ReadRows(ctx context.Context, req PlanRequest) (_ []meterstore.Row, err error) {
	defer t.explainObjectStore(&err)
	tbl := t.Iceberg()
	filter, err := t.rowFilter(req.From, req.To, req.Eq)
	if err != nil {
		return nil, err
	}
	return t.readFiltered(ctx, tbl, req.SnapshotID, filter)
}

func (t *Table) readFiltered(ctx context.Context, tbl *table.Table, snapID *int64, filter iceberg.BooleanExpression) ([]meterstore.Row, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	opts := []table.ScanOption{table.WithRowFilter(filter)}
	if snapID != nil {
		if tbl.SnapshotByID(*snapID) == nil {
			return nil, fmt.Errorf("cold table %s: snapshot %d: %w", t.cfg.Name(), *snapID, ErrNoSnapshot)
		}
		opts = append(opts, table.WithSnapshotID(*snapID))
	}
	scan := tbl.Scan(opts...)
	defer scan.Close()
	_, itr, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("cold table %s: read: %w", t.cfg.Name(), err)
	}
	return t.collect(tbl.Schema(), itr)
}

type arrowRecord = arrow.RecordBatch

// collect converts the batches of an iceberg-go scan of a table whose current
// schema is sc.
func (t *Table) collect(sc *iceberg.Schema, itr func(func(arrowRecord, error) bool)) ([]meterstore.Row, error) {
	stored := map[int]string{}
	for _, f := range sc.Fields() {
		stored[f.ID] = f.Name
	}
	var out []meterstore.Row
	for rec, err := range itr {
		if err != nil {
			return nil, fmt.Errorf("cold table %s: read: %w", t.cfg.Name(), err)
		}
		rows, err := recordToRows(t.cfg, rec, stored)
		rec.Release()
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// FileRows reads one data file of the table through the warehouse's file IO
// (local or object storage), a batch at a time: the engine's Go path for cold
// files DuckDB cannot open itself (object storage without httpfs).
func (t *Table) FileRows(ctx context.Context, loc string) (*FileRows, error) {
	fsys, err := t.Iceberg().FS(ctx)
	if err != nil {
		return nil, t.c.explainObjectStore(fmt.Errorf("cold table %s: file system: %w", t.cfg.Name(), err))
	}
	in, err := openFileRows(ctx, t.cfg, fsys, loc)
	if err != nil {
		return nil, t.c.explainObjectStore(fmt.Errorf("cold table %s: %w", t.cfg.Name(), err))
	}
	in.explain = t.c.explainObjectStore
	return in, nil
}

// FileRows is one data file read in batches of fileBatchRows.
type FileRows struct {
	cfg     meterstore.TableConfig
	loc     string
	explain func(error) error
	f       iceio.File
	pr      *file.Reader
	rr      pqarrow.RecordReader
}

const fileBatchRows = 1 << 14

func openFileRows(ctx context.Context, cfg meterstore.TableConfig, fsys iceio.IO, loc string) (*FileRows, error) {
	f, err := fsys.Open(loc)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	in := &FileRows{cfg: cfg, loc: loc, f: f}
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	if in.pr, err = file.NewParquetReader(f, file.WithReadProps(props)); err != nil {
		in.Close()
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	fr, err := pqarrow.NewFileReader(in.pr, pqarrow.ArrowReadProperties{BatchSize: fileBatchRows}, memory.DefaultAllocator)
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	if in.rr, err = fr.GetRecordReader(ctx, nil, nil); err != nil {
		in.Close()
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	return in, nil
}

// Next returns the next batch of rows, empty at the end; the file is closed
// then, and on an error.
func (r *FileRows) Next(ctx context.Context, _ []meterstore.Row) ([]meterstore.Row, error) {
	if r.rr == nil {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		r.Close()
		return nil, err
	}
	if !r.rr.Next() {
		err := r.rr.Err()
		r.Close()
		if err != nil {
			return nil, r.fail(fmt.Errorf("read %s: %w", r.loc, err))
		}
		return nil, nil
	}
	rows, err := RecordToRows(r.cfg, r.rr.RecordBatch())
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("read %s: %w", r.loc, err)
	}
	return rows, nil
}

func (r *FileRows) fail(err error) error {
	if r.explain != nil {
		return r.explain(err)
	}
	return err
}

// Close releases the file; Next after Close returns the end.
func (r *FileRows) Close() {
	if r.rr != nil {
		r.rr.Release()
		r.rr = nil
	}
	if r.pr != nil {
		_ = r.pr.Close()
		r.pr = nil
	}
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}
