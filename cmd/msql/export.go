package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"meterstore/engine"
)

// dotExport writes a query's result to a Parquet or CSV file. The query runs
// through the engine (planned, split, resolved, confined like any other) as an
// Arrow stream, and each record batch goes to the file as it arrives: memory
// is bounded by one batch, whatever the result size. Parquet (ZSTD) carries
// the boundary the result was computed against in its key-value metadata:
// meterstore_watermark, meterstore_snapshot, meterstore_read_mode,
// meterstore_tiers and meterstore_query.
func (sh *shell) dotExport(_ []string, rest string) error {
	file, query, ok := strings.Cut(rest, " ")
	query = strings.TrimSpace(query)
	if !ok || query == "" {
		return errors.New(".export takes FILE.parquet|FILE.csv QUERY")
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	if format != "parquet" && format != "csv" {
		return fmt.Errorf(".export %s: the file must end in .parquet or .csv", file)
	}
	n, prov, err := exportQuery(sh.ctx, sh.es, file, format, query)
	if err != nil {
		return err
	}
	fmt.Fprintf(sh.p.target(), "wrote %d rows to %s\n", n, file)
	if sh.p.provenance && prov != "" {
		fmt.Fprintf(sh.p.target(), "-- %s\n", prov)
	}
	return nil
}

// exportQuery streams query into file and returns the rows written and the
// provenance line. The file is written under a temporary name and renamed
// into place only when the stream ended cleanly, so a failed or cancelled
// export (or a watermark that moved under it) leaves no partial file.
func exportQuery(ctx context.Context, es *engineSession, file, format, query string) (int64, string, error) {
	st, err := es.eng.Stream(ctx, query)
	if err != nil {
		if errors.Is(err, engine.ErrNotAQuery) {
			return 0, "", withHint(err, ".export takes a query")
		}
		return 0, "", err
	}
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	prov := st.Provenance()
	es.running.Store(prov)
	defer es.running.Store(nil)

	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return 0, "", fmt.Errorf("export: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var n int64
	switch format {
	case "parquet":
		n, err = writeParquet(tmp, st, query)
	default:
		n, err = writeCSV(tmp, st)
	}
	if err == nil {
		err = st.Err()
	}
	closed = true
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", fmt.Errorf("export: %w", err)
	}
	if format != "parquet" { // pqarrow's writer closes the file itself
		if err := tmp.Close(); err != nil {
			return 0, "", fmt.Errorf("export: %w", err)
		}
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return 0, "", fmt.Errorf("export: %w", err)
	}
	done = true
	return n, prov.String(), nil
}

// exportMetadata is the key-value metadata of an exported Parquet file.
func exportMetadata(p *engine.Provenance, query string) [][2]string {
	snap := ""
	if len(p.SnapshotIDs) > 0 {
		var ids []string
		for _, id := range p.SnapshotIDs {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
		snap = strings.Join(ids, ",")
	}
	wm := ""
	if !p.Watermark.IsZero() {
		wm = p.Watermark.UTC().Format(time.RFC3339Nano)
	}
	return [][2]string{
		{"meterstore_watermark", wm},
		{"meterstore_snapshot", snap},
		{"meterstore_read_mode", p.Mode.String()},
		{"meterstore_tiers", p.Tiers.String()},
		{"meterstore_query", query},
	}
}

func writeParquet(f *os.File, st *engine.Stream, query string) (int64, error) {
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(int64(engine.DefaultStreamBatchRows)))
	fw, err := pqarrow.NewFileWriter(st.Schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return 0, err
	}
	var n int64
	for st.Next() {
		rec := st.Record()
		if err := fw.Write(rec); err != nil {
			fw.Close()
			return n, err
		}
		n += rec.NumRows()
	}
	if st.Err() != nil {
		fw.Close()
		return n, st.Err()
	}
	for _, kv := range exportMetadata(st.Provenance(), query) {
		if err := fw.AppendKeyValueMetadata(kv[0], kv[1]); err != nil {
			fw.Close()
			return n, err
		}
	}
	return n, fw.Close()
}

func writeCSV(f *os.File, st *engine.Stream) (int64, error) {
	w := csv.NewWriter(f)
	header := make([]string, st.Schema.NumFields())
	for i, fl := range st.Schema.Fields() {
		header[i] = fl.Name
	}
	if err := w.Write(header); err != nil {
		return 0, err
	}
	var n int64
	rec := make([]string, len(header))
	for st.Next() {
		b := st.Record()
		for r := 0; r < int(b.NumRows()); r++ {
			for c := range rec {
				rec[c] = csvValue(b.Column(c), r)
			}
			if err := w.Write(rec); err != nil {
				return n, err
			}
		}
		n += b.NumRows()
		w.Flush()
		if err := w.Error(); err != nil {
			return n, err
		}
	}
	w.Flush()
	return n, w.Error()
}

// csvValue is one cell as text: NULL is empty, timestamps RFC 3339 in UTC,
// decimals exact.
func csvValue(col arrow.Array, i int) string {
	if col.IsNull(i) {
		return ""
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC().Format(time.RFC3339Nano)
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	}
	return col.ValueStr(i)
}
