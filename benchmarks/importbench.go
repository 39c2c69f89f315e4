package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/ingest"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/mscons"
	"github.com/meterstore/meterstore/store"
)

// importStart is where the imported year begins; importNow is the stores'
// clock: a month after it ends, so the year lies below now minus the
// settlement lag and goes through the bulk history path.
var (
	importStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	importNow   = importStart.AddDate(1, 1, 0)
	importOp    = must(metering.ParseBdewCode("9910125000002"))
	importObis  = []string{"1-0:1.29.0", "1-0:2.29.0"}
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// importBench is -only import: the front door measured against its floors,
// side by side in one run — MSCONS parsing against reading the same bytes, a
// year of history from Parquet through ingest against archival of the same
// rows from PostgreSQL, one day's deliveries into the hot tier against COPY
// into a table with the hot table's primary key, and the bulk path's peak
// RSS at -import-rss-rows.
func importBench(ctx context.Context, o options, e *env) ([]result, error) {
	dir := filepath.Join(e.dir, "import")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	hist := meterstore.TableSpec{Name: "import_versions"}.MustBuild()
	arch := meterstore.TableSpec{Name: "archived_versions", DisableIntegrityConstraints: true}.MustBuild()
	day := meterstore.TableSpec{Name: "day_versions"}.MustBuild()
	for _, cfg := range []meterstore.TableConfig{hist, arch, day} {
		if err := hot.New(e.pool, cfg).CreateTables(ctx, importStart); err != nil {
			return nil, err
		}
		if _, err := e.cat.CreateTable(ctx, cfg); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(ctx, store.Config{Pool: e.pool, Catalog: e.cat, Tables: []meterstore.TableConfig{hist, arch, day},
		Now: func() time.Time { return importNow }})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []result
	rs, err := msconsParse(o, dir)
	if err != nil {
		return nil, err
	}
	out = append(out, rs...)
	r, err := historyImport(ctx, o, e, st, dir, hist, arch)
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	r, err = dayImport(ctx, o, e, st, dir, day)
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	if len(o.importRSSRows) >= 2 {
		for _, format := range o.importRSSFormats {
			r, err := importRSS(ctx, o, e, dir, format)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// benchMalos is n valid Marktlokations-IDs from base on.
func benchMalos(n int, base int64) []metering.MaloID {
	out := make([]metering.MaloID, 0, n)
	for ; len(out) < n; base++ {
		for d := 0; d < 10; d++ {
			if m, err := metering.ParseMaloID(strconv.FormatInt(base, 10) + strconv.Itoa(d)); err == nil {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// eachSeries yields malos × 2 channels × days of quarter-hours from start,
// one delivery per channel, UTC day and balancing month (a delivery's scope
// covers one month).
func eachSeries(malos []metering.MaloID, start time.Time, days int, fn func(meterstore.StoredSeries) error) error {
	version := must(metering.ParseVersion("20260101000001"))
	src, err := metering.SourceImport("bench")
	if err != nil {
		return err
	}
	for d := 0; d < days; d++ {
		from := start.AddDate(0, 0, d)
		for mi, m := range malos {
			for c, code := range importObis {
				obis := must(metering.ParseObis(code))
				var cur meterstore.StoredSeries
				emit := func() error {
					if len(cur.Intervals) == 0 {
						return nil
					}
					return fn(cur)
				}
				for i := 0; i < 96; i++ {
					f := from.Add(time.Duration(i) * 15 * time.Minute)
					scope := metering.ScopeFor(importOp, f, metering.SparteStrom)
					if len(cur.Intervals) > 0 && cur.Scope != scope {
						if err := emit(); err != nil {
							return err
						}
						cur = meterstore.StoredSeries{}
					}
					if len(cur.Intervals) == 0 {
						cur.Delivery = metering.Delivery{MaloID: m, Obis: obis, Sparte: metering.SparteStrom, Unit: metering.UnitKWh,
							Resolution: must(metering.ParseResolution("PT15M")), Scope: scope, Version: version, Source: src, RecordedAt: importNow}
					}
					v := decimal.New(int64((d*96+i)*7919+mi*31+c)%100000, -3)
					cur.Intervals = append(cur.Intervals, metering.Interval{From: f, To: f.Add(15 * time.Minute), Value: v, Quality: metering.QualityMeasured})
				}
				if err := emit(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeParquet writes the series as a Parquet file in the import layout
// (DECIMAL values, TIMESTAMPTZ instants), through a CSV file DuckDB converts.
func writeParquet(ctx context.Context, st *store.Store, dir, name string, malos []metering.MaloID, start time.Time, days int) (string, int, error) {
	csvPath, rows, err := writeCSV(dir, name, malos, start, days)
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(csvPath)
	pq := filepath.Join(dir, name+".parquet")
	_, err = st.Engine().DB().ExecContext(ctx, `COPY (SELECT malo_id, obis_code, sparte, CAST("from" AS TIMESTAMPTZ) AS "from",
		CAST("to" AS TIMESTAMPTZ) AS "to", CAST(value AS DECIMAL(18,6)) AS value, unit, quality, CAST(version AS DECIMAL(20,0)) AS version, operator
		FROM read_csv('`+csvPath+`', header = true, all_varchar = true)) TO '`+pq+`' (FORMAT parquet)`)
	return pq, rows, err
}

// writeCSV writes the series as a CSV file in the canonical layout (RFC 3339
// instants with their offset, values as decimal text).
func writeCSV(dir, name string, malos []metering.MaloID, start time.Time, days int) (string, int, error) {
	csvPath := filepath.Join(dir, name+".csv")
	f, err := os.Create(csvPath)
	if err != nil {
		return "", 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "malo_id,obis_code,sparte,from,to,value,unit,quality,version,operator")
	rows := 0
	err = eachSeries(malos, start, days, func(s meterstore.StoredSeries) error {
		for _, iv := range s.Intervals {
			fmt.Fprintf(w, "%s,%s,STROM,%s,%s,%s,KWH,MEASURED,%s,%s\n", s.MaloID, s.Obis, iv.From.Format(time.RFC3339), iv.To.Format(time.RFC3339),
				iv.Value.String(), s.Version, importOp)
			rows++
		}
		return nil
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	return csvPath, rows, nil
}

// msconsParse writes -import-malos × 2 channels × 31 days as one MSCONS
// interchange and reads it, alternately, with the reader and as bytes.
func msconsParse(o options, dir string) ([]result, error) {
	path := filepath.Join(dir, "deliveries.edi")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	mw := mscons.NewWriter(bw, mscons.WriteOptions{DecimalComma: true, LineBreaks: true})
	values := 0
	err = eachSeries(benchMalos(o.importMalos, 4100000000), importStart, 31, func(s meterstore.StoredSeries) error {
		values += len(s.Intervals)
		return mw.Write(s.Delivery)
	})
	if err == nil {
		err = mw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var parse, read []time.Duration
	for rep := 0; rep < o.reps; rep++ {
		d, err := timed(func() error { return readBytes(path) })
		if err != nil {
			return nil, err
		}
		read = append(read, d)
		d, err = timed(func() error { return parseMSCONS(path, values) })
		if err != nil {
			return nil, err
		}
		parse = append(parse, d)
	}
	p, r := median(parse), median(read)
	mb := float64(fi.Size()) / (1 << 20)
	logf("mscons: %d values, %.1f MiB: parse %s, read %s", values, mb, p, r)
	return []result{{measure: fmt.Sprintf("MSCONS parsing (%d values, %.1f MiB, decimal comma)", values, mb),
		against: "reading the same bytes (the I/O floor)", target: "reported",
		figure: fmt.Sprintf("%.1f MiB/s, %.0f values/s (the floor %.0f MiB/s: %.2g× its rate)", mb/p.Seconds(), float64(values)/p.Seconds(),
			mb/r.Seconds(), r.Seconds()/p.Seconds()), met: true}}, nil
}

func timed(fn func() error) (time.Duration, error) {
	start := time.Now()
	err := fn()
	return time.Since(start), err
}

func readBytes(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, bufio.NewReaderSize(f, 64<<10))
	return err
}

func parseMSCONS(path string, want int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := mscons.NewReader(bufio.NewReaderSize(f, 64<<10), mscons.Options{Now: func() time.Time { return importNow }})
	n := 0
	for {
		m, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for _, d := range m.Deliveries {
			n += len(d.Intervals)
		}
	}
	if n != want {
		return fmt.Errorf("mscons: read %d values of %d", n, want)
	}
	return nil
}

// historyImport imports a year of -import-malos × 2 channels from Parquet
// (the bulk history path: one commit) and archives the same rows from
// PostgreSQL (daily windows, as archival runs), reporting rows/s of each.
func historyImport(ctx context.Context, o options, e *env, st *store.Store, dir string, hist, arch meterstore.TableConfig) (result, error) {
	malos := benchMalos(o.importMalos, 5100000000)
	pq, rows, err := writeParquet(ctx, st, dir, "year", malos, importStart, o.importDays)
	if err != nil {
		return result{}, err
	}
	logf("import: %d rows (%d MaLo × 2 channels × %d days) in %s", rows, o.importMalos, o.importDays, pq)
	start := time.Now()
	rep, err := ingest.Files(ctx, st, ingest.Options{Table: hist.Name()}, pq)
	if err != nil {
		return result{}, err
	}
	imp := time.Since(start)
	if !rep.OK() || rep.BulkRows != rows {
		return result{}, fmt.Errorf("history import: %s", rep)
	}
	logf("import: %s", rep)

	at, _ := st.Table(arch.Name())
	if err := at.Hot().EnsurePartitions(ctx, importStart.Add(-24*time.Hour), importStart.AddDate(0, 0, o.importDays+1)); err != nil {
		return result{}, err
	}
	var batch []meterstore.Row
	flush := func() error {
		_, err := copyRows(ctx, e, arch, arch.Name(), batch)
		batch = batch[:0]
		return err
	}
	err = eachSeries(malos, importStart, o.importDays, func(s meterstore.StoredSeries) error {
		r, err := arch.Encode(s)
		if err != nil {
			return err
		}
		batch = append(batch, r...)
		if len(batch) >= copyBatchRows {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return result{}, err
	}
	if _, err := e.pool.Exec(ctx, "VACUUM (ANALYZE) "+meterstore.QuoteIdent(arch.Name())); err != nil {
		return result{}, err
	}
	start = time.Now()
	// Archive what the rows span: windows up to their last day, no empty ones after.
	out, err := at.Archive(ctx, importStart.AddDate(0, 0, o.importDays).Add(arch.SettlementLag()+time.Hour), 0)
	if err != nil {
		return result{}, err
	}
	took := time.Since(start)
	var archived int64
	for _, w := range out.Windows {
		archived += w.Rows
	}
	if archived != int64(rows) {
		return result{}, fmt.Errorf("archival: %d rows archived of %d (%d windows)", archived, rows, len(out.Windows))
	}
	ratio := took.Seconds() / imp.Seconds()
	return result{measure: fmt.Sprintf("a year of history (%d MaLo × 2 channels, %d rows) from Parquet through ingest (msql import)", o.importMalos, rows),
		against: fmt.Sprintf("archival of the same rows from PostgreSQL (%d daily windows)", len(out.Windows)), target: "≥ 0.8×",
		figure: fmt.Sprintf("%.2f× (%.0f vs %.0f rows/s; %s vs %s, one commit vs %d)", ratio, float64(rows)/imp.Seconds(), float64(rows)/took.Seconds(),
			imp.Round(time.Millisecond), took.Round(time.Millisecond), len(out.Windows)),
		met: ratio >= 0.8}, nil
}

// dayImport imports one day's deliveries of -import-day-malos × 2 channels
// from Parquet into the hot tier (within the settlement lag), against binary
// COPY of the same rows into a table built by the hot DDL (every constraint
// the import's rows meet) and, for reference, into one with only the hot
// table's primary key; a new day per repetition, alternating.
func dayImport(ctx context.Context, o options, e *env, st *store.Store, dir string, cfg meterstore.TableConfig) (result, error) {
	malos := benchMalos(o.importDayMalos, 6100000000)
	first := importNow.Truncate(24*time.Hour).AddDate(0, 0, -6)
	var imp, floor, keyOnly, read []time.Duration
	rows := 0
	for rep := 0; rep < min(o.reps, 5); rep++ {
		day := first.AddDate(0, 0, rep)
		pq, n, err := writeParquet(ctx, st, dir, fmt.Sprintf("day%d", rep), malos, day, 1)
		if err != nil {
			return result{}, err
		}
		rows = n
		var rs []meterstore.Row
		if err := eachSeries(malos, day, 1, func(s meterstore.StoredSeries) error {
			r, err := cfg.Encode(s)
			rs = append(rs, r...)
			return err
		}); err != nil {
			return result{}, err
		}
		ref := meterstore.TableSpec{Name: fmt.Sprintf("day_floor_%d", rep)}.MustBuild()
		refHot := hot.New(e.pool, ref)
		if err := refHot.CreateTables(ctx, importNow); err != nil {
			return result{}, err
		}
		if err := refHot.EnsurePartitions(ctx, day, day.Add(24*time.Hour)); err != nil {
			return result{}, err
		}
		d, err := copyRows(ctx, e, ref, ref.Name(), rs)
		if err != nil {
			return result{}, err
		}
		floor = append(floor, d)
		pk := fmt.Sprintf("day_pk_%d", rep)
		if err := createRef(ctx, e, cfg, pk, true); err != nil {
			return result{}, err
		}
		if d, err = copyRows(ctx, e, cfg, pk, rs); err != nil {
			return result{}, err
		}
		keyOnly = append(keyOnly, d)
		d, err = timed(func() error {
			_, err := ingest.Files(ctx, st, ingest.Options{Table: cfg.Name(), DryRun: true}, pq)
			return err
		})
		if err != nil {
			return result{}, err
		}
		read = append(read, d)
		start := time.Now()
		res, err := ingest.Files(ctx, st, ingest.Options{Table: cfg.Name()}, pq)
		if err != nil {
			return result{}, err
		}
		imp = append(imp, time.Since(start))
		if !res.OK() || res.HotRows != n {
			return result{}, fmt.Errorf("day import: %s", res)
		}
	}
	i, f, k, r := median(imp), median(floor), median(keyOnly), median(read)
	ratio := f.Seconds() / i.Seconds()
	logf("day import: %s (the read alone, a dry run: %s), COPY into the constrained table %s", i, r, f)
	return result{measure: fmt.Sprintf("one day's deliveries (%d MaLo × 2 channels, %d rows) from Parquet into the hot tier", o.importDayMalos, rows),
		against: "binary COPY of the same rows into the same constrained table (the hot DDL: CHECKs, primary key, no_overlap and one-operator exclusions, append-only trigger)", target: "≥ 0.9×",
		figure: fmt.Sprintf("%.2f× (%.0f vs %.0f rows/s; the read alone, a dry run, %.0f rows/s; against COPY into a table with the primary key only, %.0f rows/s: %.2f×)", ratio,
			float64(rows)/i.Seconds(), float64(rows)/f.Seconds(), float64(rows)/r.Seconds(), float64(rows)/k.Seconds(), k.Seconds()/i.Seconds()), met: ratio >= 0.9}, nil
}

// importRSS imports a year's file of format (parquet or csv) of each size of
// -import-rss-rows into a fresh table in a fresh process and compares their
// peak resident memory.
func importRSS(ctx context.Context, o options, e *env, dir, format string) (result, error) {
	type run struct {
		rows int
		rep  childReport
	}
	var runs []run
	for i, n := range o.importRSSRows {
		cfg := meterstore.TableSpec{Name: fmt.Sprintf("import_rss_%s%d_versions", format, i)}.MustBuild()
		if err := hot.New(e.pool, cfg).CreateTables(ctx, importStart); err != nil {
			return result{}, err
		}
		if _, err := e.cat.CreateTable(ctx, cfg); err != nil {
			return result{}, err
		}
		st, err := store.Open(ctx, store.Config{Pool: e.pool, Catalog: e.cat, Tables: []meterstore.TableConfig{cfg}, Now: func() time.Time { return importNow }})
		if err != nil {
			return result{}, err
		}
		perMalo := 2 * 96 * o.importDays
		malos := benchMalos((n+perMalo-1)/perMalo, int64(7100000000+i*100000))
		var pq string
		var rows int
		if format == "csv" {
			pq, rows, err = writeCSV(dir, cfg.Name(), malos, importStart, o.importDays)
		} else {
			pq, rows, err = writeParquet(ctx, st, dir, cfg.Name(), malos, importStart, o.importDays)
		}
		st.Close()
		if err != nil {
			return result{}, err
		}
		self, err := os.Executable()
		if err != nil {
			return result{}, err
		}
		cmd := exec.CommandContext(ctx, self, "-child", strings.Join([]string{"import", e.dsn, e.warehouse, cfg.Name(), pq}, "|"))
		cmd.Stderr = os.Stderr
		outb, err := cmd.Output()
		if err != nil {
			return result{}, fmt.Errorf("import child for %d rows: %w", rows, err)
		}
		var rep childReport
		if err := json.Unmarshal(outb, &rep); err != nil {
			return result{}, fmt.Errorf("import child output %q: %w", outb, err)
		}
		logf("import RSS (%s): %d rows in %.1fs, peak RSS %d MiB", format, rep.Rows, rep.Seconds, rep.PeakRSSkB>>10)
		runs = append(runs, run{rows, rep})
		os.Remove(pq)
	}
	small, large := runs[0], runs[len(runs)-1]
	growth := float64(large.rep.PeakRSSkB)/float64(small.rep.PeakRSSkB) - 1
	return result{measure: fmt.Sprintf("import peak RSS, a year's %s of %d vs %d rows (bulk history path)", format, small.rows, large.rows),
		against: "the smaller file", target: "flat (≤ +10 %)",
		figure: fmt.Sprintf("%+.0f %% (%d vs %d MiB; %.0f and %.0f rows/s)", 100*growth, small.rep.PeakRSSkB>>10, large.rep.PeakRSSkB>>10,
			float64(small.rows)/small.rep.Seconds, float64(large.rows)/large.rep.Seconds), met: growth <= 0.10}, nil
}

// runImportChild imports one Parquet file into a table of the default
// layout and prints its rows, time and peak RSS as JSON.
func runImportChild(ctx context.Context, dsn, warehouse, name, path string) error {
	cfg := meterstore.TableSpec{Name: name}.MustBuild()
	st, closeStore, err := openChildStore(ctx, dsn, warehouse, cfg, importNow)
	if err != nil {
		return err
	}
	defer closeStore()
	start := time.Now()
	rep, err := ingest.Files(ctx, st, ingest.Options{}, path)
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("import: %s", rep)
	}
	return json.NewEncoder(os.Stdout).Encode(childReport{Rows: int64(rep.Rows), Seconds: time.Since(start).Seconds(), PeakRSSkB: peakRSS()})
}
