package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"meterstore"
	"meterstore/metering"
)

func init() {
	subcommands["completeness"] = subcommand{"expected vs actual intervals per series over balancing days FROM..TO", runCompleteness}
}

const completenessUsage = `msql completeness [--table T] [--all] FROM TO — per series (malo_id, obis_code,
identity columns, resolution): the intervals expected on the balancing days
FROM ≤ day < TO (DST-aware, each Sparte on its own day: gas 06:00–06:00) against
the resolved readings there. Only series with a reading in range are listed
(a meter that sent nothing is unknown to the store); --all lists complete
series too. Runs as one query through the engine, so both tiers count.`

func runCompleteness(ctx context.Context, args []string, io stdio) error {
	var deploy deployFlags
	var name, format string
	var all bool
	fs := newFlagSet("msql completeness", completenessUsage, io)
	deploy.register(fs)
	fs.StringVar(&name, "table", "", "the table (default: the first configured)")
	fs.StringVar(&format, "format", "table", "output format: "+strings.Join(formats, ", "))
	fs.BoolVar(&all, "all", false, "list complete series too")
	if err := parseArgs(fs, args, 2); err != nil {
		return err
	}
	from, err1 := time.Parse("2006-01-02", fs.Arg(0))
	to, err2 := time.Parse("2006-01-02", fs.Arg(1))
	if err1 != nil || err2 != nil || !from.Before(to) {
		return withHint(fmt.Errorf("%w: FROM and TO are balancing days (YYYY-MM-DD) with FROM < TO", errUsage), "msql completeness 2025-10-01 2025-11-01")
	}
	if err := validFormat(format); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	d, err := deploy.open(ctx, io)
	if err != nil {
		return err
	}
	defer d.Close()
	tb, err := d.table(name)
	if err != nil {
		return err
	}
	q, keys := completenessSQL(tb.Config(), from, to)
	res, err := d.engine.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("completeness: %w", err)
	}
	t, err := completenessRows(table{columns: res.Columns, types: res.Types, rows: res.Rows}, len(keys), from, to, all)
	if err != nil {
		return err
	}
	if err := render(io.out, t, format, 0, "NULL"); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintf(io.out, "-- %s\n", res.Provenance)
	}
	return nil
}

// completenessSQL counts resolved rows per series and balancing day; the
// expectation is added in Go (completenessRows), day by day, so a surplus on
// one day never hides a gap on another.
func completenessSQL(cfg meterstore.TableConfig, from, to time.Time) (string, []string) {
	keys := []string{"malo_id", "obis_code"}
	if cfg.IdentifyByMelo() {
		keys = append(keys, "melo_id")
	}
	for _, c := range cfg.IdentityColumns() {
		keys = append(keys, meterstore.QuoteIdent(c.Name))
	}
	k := strings.Join(keys, ", ")
	lo, hi := from.AddDate(0, 0, -1).Format("2006-01-02"), to.AddDate(0, 0, 1).Format("2006-01-02")
	// CAST keeps the alias: the engine's stored balancing_day rewrite drops it.
	return fmt.Sprintf(`SELECT %[1]s, sparte, resolution, CAST(meter_balancing_day("from", sparte) AS DATE) AS day, count(*) AS n
FROM %[2]s
WHERE "from" >= TIMESTAMPTZ '%[3]s' AND "from" < TIMESTAMPTZ '%[4]s'
GROUP BY ALL ORDER BY ALL`, k, meterstore.QuoteIdent(cfg.ResolvedName()), lo, hi), keys
}

// completenessRows folds the per-day counts into one row per series.
func completenessRows(res table, nkeys int, from, to time.Time, all bool) (table, error) {
	type acc struct {
		key    []any
		sparte metering.Sparte
		res    metering.Resolution
		counts map[metering.Date]int64
	}
	series := map[string]*acc{}
	var order []string
	lo, hi := metering.DateOf(from), metering.DateOf(to)
	for _, r := range res.rows {
		day, ok := r[nkeys+2].(time.Time)
		if !ok {
			continue
		}
		d := metering.DateOf(day)
		if d.Compare(lo) < 0 || d.Compare(hi) >= 0 {
			continue
		}
		id := fmt.Sprint(r[:nkeys+2]...)
		a := series[id]
		if a == nil {
			sp, err := metering.ParseSparte(fmt.Sprint(r[nkeys]))
			if err != nil {
				return table{}, err
			}
			rs, err := metering.ParseResolution(fmt.Sprint(r[nkeys+1]))
			if err != nil {
				continue // no per-day grid (P1M, …)
			}
			a = &acc{key: r[:nkeys], sparte: sp, res: rs, counts: map[metering.Date]int64{}}
			series[id] = a
			order = append(order, id)
		}
		a.counts[d] += toInt64(r[nkeys+3])
	}
	out := table{columns: append(append([]string(nil), res.columns[:nkeys]...), "resolution", "expected", "actual", "missing", "surplus", "first_gap")}
	out.types = make([]string, len(out.columns))
	out.types[len(out.types)-1] = "DATE"
	for _, id := range order {
		a := series[id]
		var expected, actual, missing, surplus int64
		var firstGap any
		for d := lo; d.Compare(hi) < 0; d = d.AddDays(1) {
			e, err := metering.ExpectedIntervals(d, a.res, a.sparte)
			if err != nil {
				return table{}, err
			}
			n := a.counts[d]
			expected += int64(e)
			actual += n
			if n < int64(e) {
				missing += int64(e) - n
				if firstGap == nil {
					firstGap = d.Time()
				}
			} else {
				surplus += n - int64(e)
			}
		}
		if !all && missing == 0 && surplus == 0 {
			continue
		}
		row := append(append([]any(nil), a.key...), a.res.String(), expected, actual, missing, surplus, firstGap)
		out.rows = append(out.rows, row)
	}
	return out, nil
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	case int:
		return int64(x)
	}
	return 0
}
