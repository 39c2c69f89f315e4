package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/duckfmt"
)

// dotExport writes a query's result to a Parquet or CSV file. The query runs
// through the engine (planned, split, resolved, confined like any other) as an
// Arrow stream, and each record batch goes to the file as it arrives: memory
// is bounded by one batch, whatever the result size. Parquet (ZSTD) carries
// the boundary the result was computed against in its key-value metadata,
// under the keys Flight SQL uses (meterstore.watermark, meterstore.tiers,
// meterstore.read_mode, meterstore.watermarks, meterstore.snapshot_ids, …),
// and the query under meterstore.query. CSV holds the same text the shell
// prints for the query.
func (sh *shell) dotExport(_ []string, rest string) error {
	file, query, ok := strings.Cut(rest, " ")
	query = strings.TrimSpace(query)
	if !ok || query == "" {
		return errors.New(".export takes FILE.parquet|FILE.csv|FILE.xlsx QUERY")
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(file), "."))
	if format != "parquet" && format != "csv" && format != "xlsx" {
		return fmt.Errorf(".export %s: the file must end in .parquet, .csv or .xlsx", file)
	}
	export := exportQuery
	if format == "xlsx" {
		export = func(ctx context.Context, es *engineSession, file, _, query string, values duckfmt.Formatter, args []any) (int64, string, error) {
			return exportXLSX(ctx, es, file, query, values, args)
		}
	}
	n, prov, err := export(sh.ctx, sh.es, file, format, query, sh.p.values, sh.params.args())
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
func exportQuery(ctx context.Context, es *engineSession, file, format, query string, values duckfmt.Formatter, args []any) (int64, string, error) {
	st, err := es.eng.Stream(engine.WithProgress(ctx, &es.prog), query, args...)
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

	tmp, err := createTemp(file)
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
		n, err = writeCSV(tmp, st, values)
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

// queryKey is the key-value metadata entry that records the exported query,
// beside the provenance keys (meterstore.watermark, meterstore.tiers, …) the
// engine writes on every Arrow schema, Flight SQL's included: one spelling
// for every surface.
const queryKey = "meterstore.query"

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
	if err := fw.AppendKeyValueMetadata(queryKey, query); err != nil {
		fw.Close()
		return n, err
	}
	return n, fw.Close()
}

func writeCSV(f *os.File, st *engine.Stream, values duckfmt.Formatter) (int64, error) {
	w := bufio.NewWriter(f)
	header := make([]string, st.Schema.NumFields())
	types := make([]duckfmt.Type, len(header))
	for i, fl := range st.Schema.Fields() {
		header[i] = fl.Name
		types[i] = duckfmt.ParseType(st.Description.Types[i])
	}
	writeCSVRecord(w, header, nil)
	var n int64
	rec := make([]string, len(header))
	null := make([]bool, len(header))
	for st.Next() {
		b := st.Record()
		for r := 0; r < int(b.NumRows()); r++ {
			for c := range rec {
				v := arrowValue(b.Column(c), r)
				rec[c], null[c] = values.Text(v, types[c]), v == nil
			}
			writeCSVRecord(w, rec, null)
		}
		n += b.NumRows()
		if err := w.Flush(); err != nil {
			return n, err
		}
	}
	return n, w.Flush()
}

// arrowValue is one value of an exported column as the driver hands it over,
// so a CSV export prints exactly what the shell prints for the same query.
func arrowValue(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC()
	case *array.Date32:
		return a.Value(i).ToTime()
	case *array.Decimal128:
		return decimal.NewFromBigInt(a.Value(i).BigInt(), -a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Boolean:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	}
	return col.ValueStr(i)
}

// createTemp creates a new file beside target, with the mode a plain create
// gives (0666 less the umask): os.CreateTemp's 0600 would survive the rename
// and leave the export unreadable to everyone else the umask lets read it.
func createTemp(target string) (*os.File, error) {
	dir, base := filepath.Split(target)
	for attempt := 0; ; attempt++ {
		name := filepath.Join(dir, fmt.Sprintf(".%s.%08x.tmp", base, rand.Uint32()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && attempt < 100 {
			continue
		}
		return f, err
	}
}
