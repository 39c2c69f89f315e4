package main

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
)

// compactionMeters is how many meters the single-meter pairs of the
// compaction measure read (each read alternately through readings and raw).
const compactionMeters = 10

// compaction measures what compacting the closed months changes, side by side
// in one run: resolution applied (1 % corrections) against the unresolved
// scan of the same files, and one meter's history through readings against
// raw DuckDB over the files it needs — before compaction (daily files, a
// correction file per corrected day), after it (keys-unique current files, a
// superseded file the current read skips), and after late corrections land
// in the compacted months, at a creation-time version (resolved by
// exclusion) and at restated day versions (ranked, run by run).
func (b *bench) compaction() ([]result, error) {
	lo, hi, err := b.monthsBelow(false)
	if err != nil {
		return nil, err
	}
	if !lo.Before(hi) {
		logf("compaction: skipped (no closed month below the watermark)")
		return nil, nil
	}
	dirty := b.fx.cleanUntil
	if dirty.Before(lo) || !dirty.Before(hi) {
		dirty = lo
	}
	var out []result
	stage := func(label string) error {
		r, err := b.resolvedVsUnresolved(label, dirty, hi)
		if err != nil {
			return err
		}
		out = append(out, r)
		if label == "late corrections, restated versions" {
			return nil
		}
		m, err := b.singleMeterPair(label, lo, hi)
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	}
	if err := stage("daily files"); err != nil {
		return nil, err
	}
	r, err := b.compactClosedMonths()
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	if err := stage("compacted"); err != nil {
		return nil, err
	}
	n, err := b.lateCorrections(dirty, hi, func(time.Time) uint64 { return 20991231000001 })
	if err != nil {
		return nil, err
	}
	logf("compaction: %d late correction rows at a creation-time version", n)
	if err := stage("late corrections, creation-time version"); err != nil {
		return nil, err
	}
	n, err = b.lateCorrections(dirty, hi, func(day time.Time) uint64 {
		return uint64(day.Year()*10000+int(day.Month())*100+day.Day())*1_000_000 + 3
	})
	if err != nil {
		return nil, err
	}
	logf("compaction: %d late correction rows at restated day versions", n)
	if err := stage("late corrections, restated versions"); err != nil {
		return nil, err
	}
	return out, nil
}

// compactClosedMonths compacts every closed month and the open month's
// archived days, and reports files and bytes per row before and after, rows
// rewritten and the time it took; the fixture's file list is the compacted
// snapshot's afterwards.
func (b *bench) compactClosedMonths() (result, error) {
	lo, hi, err := b.monthsBelow(true)
	if err != nil {
		return result{}, err
	}
	before, err := b.filesIn(lo, hi)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	res, err := b.table().Cold().Compact(b.ctx, catalog.CompactOptions{})
	if err != nil {
		return result{}, err
	}
	took := time.Since(start)
	after, err := b.filesIn(lo, hi)
	if err != nil {
		return result{}, err
	}
	if b.fx.coldFiles, err = b.plannedPaths(); err != nil {
		return result{}, err
	}
	var rows, superseded int64
	for _, p := range res.Partitions {
		rows, superseded = rows+p.Rows, superseded+p.Superseded
	}
	return result{measure: fmt.Sprintf("compaction of %d months (closed, and the open one's archived days)", len(res.Partitions)), against: "reported", target: "reported", met: true,
		figure: fmt.Sprintf("%d → %d files, %.2f → %.2f B/row, %d rows (%d superseded) in %s (%.0f rows/s)", len(before), len(after),
			bytesPerRow(before), bytesPerRow(after), rows, superseded, took.Round(time.Millisecond), float64(rows)/took.Seconds())}, nil
}

// plannedPaths are the paths of every file of the current snapshot.
func (b *bench) plannedPaths() ([]string, error) {
	fs, _, err := b.table().Cold().PlanFiles(b.ctx, catalog.PlanRequest{})
	return pathsOf(fs), err
}

func pathsOf(fs []catalog.DataFile) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// meterQuery reads one meter's values in a range from the relation %s.
const meterQuery = `SELECT "from", value FROM %s WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3 ORDER BY "from"`

// neededFiles are the files of [from, to) a hand-written query needs: every
// planned file but those compaction marked superseded.
func (b *bench) neededFiles(from, to time.Time) ([]catalog.DataFile, error) {
	fs, err := b.filesIn(from, to)
	return slices.DeleteFunc(fs, func(f catalog.DataFile) bool { return f.Superseded }), err
}

// monthsBelow is the span of the months whose partitions lie wholly below the
// watermark, and with open the month holding it.
func (b *bench) monthsBelow(open bool) (lo, hi time.Time, err error) {
	parts, err := b.table().Cold().Partitions(b.ctx)
	if err != nil {
		return lo, hi, err
	}
	for _, p := range parts {
		if !p.Closed && !(open && p.Open) {
			continue
		}
		if lo.IsZero() || p.Month.Before(lo) {
			lo = p.Month
		}
		if end := p.Month.AddDate(0, 1, 0); end.After(hi) {
			hi = end
		}
	}
	return lo, hi, nil
}

func (b *bench) filesIn(from, to time.Time) ([]catalog.DataFile, error) {
	fs, _, err := b.table().Cold().PlanFiles(b.ctx, catalog.PlanRequest{From: from, To: to})
	return fs, err
}

func readParquetOf(fs []catalog.DataFile) string {
	q := make([]string, len(fs))
	for i, f := range fs {
		q[i] = "'" + f.Path + "'"
	}
	return "read_parquet([" + strings.Join(q, ", ") + "])"
}

func bytesPerRow(fs []catalog.DataFile) float64 {
	var bytes, rows int64
	for _, f := range fs {
		bytes, rows = bytes+f.SizeBytes, rows+f.Records
	}
	return float64(bytes) / float64(max(rows, 1))
}

// resolvedVsUnresolved times the aggregate of [from, to) through readings
// against the same aggregate, unresolved, over every planned file.
func (b *bench) resolvedVsUnresolved(label string, from, to time.Time) (result, error) {
	fs, err := b.filesIn(from, to)
	if err != nil {
		return result{}, err
	}
	rng := fmt.Sprintf(`"from" >= %s AND "from" < %s`, ts(from), ts(to))
	resolved, unresolved, err := b.timePair(b.o.reps,
		func() (time.Duration, error) {
			return b.runEngine(`SELECT sum(value), count(*) FROM readings WHERE ` + rng)
		},
		func() (time.Duration, error) {
			return b.runRaw(`SELECT sum(value), count(*) FROM ` + readParquetOf(fs) + ` WHERE ` + rng)
		})
	if err != nil {
		return result{}, err
	}
	explain, err := b.st.Engine().Explain(b.ctx, `SELECT sum(value) FROM readings WHERE `+rng)
	if err != nil {
		return result{}, err
	}
	r := ratioResult(fmt.Sprintf("%s: cold aggregate, resolution applied (%g %% corrections, %d days)", label, 100*b.o.corrections, int(to.Sub(from).Hours()/24)),
		"the unresolved aggregate over the same files", "≤ 1.3×", resolved, unresolved, 1.3, "")
	r.note = firstLine(explain, "cold:")
	return r, nil
}

// singleMeterPair reads meters' history in [from, to) through readings and,
// alternately, by raw DuckDB over the files a hand-written query needs (every
// planned file but those marked superseded); PostgreSQL's primary-key lookup
// of the same rows is reported where the fixture has the reference copy.
func (b *bench) singleMeterPair(label string, from, to time.Time) (result, error) {
	fs, err := b.neededFiles(from, to)
	if err != nil {
		return result{}, err
	}
	q := meterQuery
	var ours, raw, pg []time.Duration
	for _, m := range b.fx.malos[:min(compactionMeters, len(b.fx.malos))] {
		o, r, err := b.timePair(1,
			func() (time.Duration, error) { return b.runEngine(fmt.Sprintf(q, "readings"), m, from, to) },
			func() (time.Duration, error) { return b.runRaw(fmt.Sprintf(q, readParquetOf(fs)), m, from, to) })
		if err != nil {
			return result{}, err
		}
		ours, raw = append(ours, o), append(raw, r)
		if b.o.reference {
			p, err := b.runPG(fmt.Sprintf(q, refTable), m, from, to)
			if err != nil {
				return result{}, err
			}
			pg = append(pg, p)
		}
	}
	p50, r50 := percentile(ours, 0.5), percentile(raw, 0.5)
	figure := fmt.Sprintf("%.2f× p50 (%s vs %s, %d files)", float64(p50)/float64(r50), p50.Round(time.Millisecond), r50.Round(time.Millisecond), len(fs))
	if len(pg) > 0 {
		figure += fmt.Sprintf("; PostgreSQL %s (%.2f×)", percentile(pg, 0.5).Round(time.Millisecond), float64(p50)/float64(percentile(pg, 0.5)))
	}
	return result{measure: fmt.Sprintf("%s: single meter, %d days, cold p50", label, int(to.Sub(from).Hours()/24)),
		against: "raw DuckDB over the files it needs; PostgreSQL primary-key lookup reported", target: "≤ 1.1× raw DuckDB",
		figure: figure, met: float64(p50) <= 1.1*float64(r50)}, nil
}

// lateCorrections restates 1 % of the (meter, channel, day) groups of
// [from, to) — the current row of each reading, value ×1.05 — as late
// corrections at version(day), one cold append per month, and returns the rows
// appended.
func (b *bench) lateCorrections(from, to time.Time, version func(day time.Time) uint64) (int, error) {
	cold := b.table().Cold()
	share := max(b.o.corrections, 0.01)
	n := 0
	for first := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC); first.Before(to); first = first.AddDate(0, 1, 0) {
		month, end := first, first.AddDate(0, 1, 0)
		if month.Before(from) {
			month = from
		}
		if end.After(to) {
			end = to
		}
		got, err := cold.ReadRows(b.ctx, catalog.PlanRequest{From: month, To: end})
		if err != nil {
			return n, err
		}
		var rows []meterstore.Row
		for _, r := range newestRows(got) {
			day := r.From.Truncate(24 * time.Hour)
			h := fnv.New64a()
			fmt.Fprintf(h, "%d|%s|%s|%s|%d", b.o.seed, r.MaloID, r.ObisCode, day.Format(time.DateOnly), version(day))
			if float64(h.Sum64()%1_000_000) >= share*1_000_000 {
				continue
			}
			r.Value = r.Value.Mul(decimal.RequireFromString("1.05")).Round(6)
			r.Version = version(day)
			r.RecordedAt = b.fx.now
			rows = append(rows, r)
		}
		if _, err := cold.AppendCold(b.ctx, rows); err != nil {
			return n, err
		}
		n += len(rows)
	}
	return n, nil
}

// newestRows keeps the row of the highest version per reading.
func newestRows(rows []meterstore.Row) []meterstore.Row {
	newest := map[string]int{}
	for i, r := range rows {
		k := strings.Join([]string{r.MaloID, optional(r.MeloID), r.ObisCode, r.From.String(), r.VersionScope}, "|")
		for _, x := range r.Extra {
			k += "|" + optional(x)
		}
		if j, ok := newest[k]; !ok || r.Version > rows[j].Version {
			newest[k] = i
		}
	}
	out := make([]meterstore.Row, 0, len(newest))
	for _, i := range newest {
		out = append(out, rows[i])
	}
	return out
}

func optional(s *string) string {
	if s == nil {
		return "\x00"
	}
	return *s
}
