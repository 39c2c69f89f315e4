package udf

import (
	"database/sql/driver"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/meterstore/meterstore/metering"
)

// tsTypes are the argument types a calendar function accepts for ts: an
// instant (TIMESTAMPTZ), or a TIMESTAMP read as UTC. Both arrive in Go as a
// UTC time.Time.
var tsTypes = []duckdb.Type{duckdb.TYPE_TIMESTAMP_TZ, duckdb.TYPE_TIMESTAMP}

// Memoised calendar functions, shared by every database: they are pure.
var (
	localDayMemo   = newHourMemo(metering.LocalDay)
	gasDayMemo     = newHourMemo(metering.GasDay)
	localMonthMemo = newHourMemo(metering.LocalMonth)

	balancingDayMemos   = sparteMemos(metering.BalancingDay)
	balancingMonthMemos = sparteMemos(metering.BalancingMonth)
)

func sparteMemos(f func(time.Time, metering.Sparte) metering.Date) map[metering.Sparte]*hourMemo {
	m := map[metering.Sparte]*hourMemo{}
	for _, s := range metering.Sparten() {
		m[s] = newHourMemo(func(t time.Time) metering.Date { return f(t, s) })
	}
	return m
}

// dayFunc is meter_local_day, meter_gas_day and meter_local_month:
// (ts) → DATE.
type dayFunc struct {
	ts   duckdb.Type
	memo *hourMemo
}

func (f dayFunc) Config() duckdb.ScalarFuncConfig { return config(duckdb.TYPE_DATE, f.ts) }

func (f dayFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		return f.memo.date(v[0].(time.Time)), nil
	}}
}

// balancingFunc is meter_balancing_day and meter_balancing_month:
// (ts, sparte) → DATE, with sparte read per row.
type balancingFunc struct {
	name  string
	ts    duckdb.Type
	memos map[metering.Sparte]*hourMemo
}

func (f balancingFunc) Config() duckdb.ScalarFuncConfig {
	return config(duckdb.TYPE_DATE, f.ts, duckdb.TYPE_VARCHAR)
}

func (f balancingFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		s, err := metering.ParseSparte(v[1].(string))
		if err != nil {
			return nil, fnError(f.name, err)
		}
		return f.memos[s].date(v[0].(time.Time)), nil
	}}
}

// resolutions caches strict resolution parses (ParseResolution allocates to
// compare against the canonical spelling).
var resolutions = newStringCache[metering.Resolution](64)

// expectedIntervalsFunc is meter_expected_intervals(day, resolution[, sparte])
// → INTEGER. Without sparte the day is the calendar day (metering's unset
// Sparte, which balances like electricity, heat and water).
type expectedIntervalsFunc struct{ withSparte bool }

const expectedIntervalsName = "meter_expected_intervals"

func (f expectedIntervalsFunc) Config() duckdb.ScalarFuncConfig {
	if f.withSparte {
		return config(duckdb.TYPE_INTEGER, duckdb.TYPE_DATE, duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR)
	}
	return config(duckdb.TYPE_INTEGER, duckdb.TYPE_DATE, duckdb.TYPE_VARCHAR)
}

func (f expectedIntervalsFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		r, err := resolutions.get(v[1].(string), metering.ParseResolution)
		if err != nil {
			return nil, fnError(expectedIntervalsName, err)
		}
		var s metering.Sparte
		if f.withSparte {
			if s, err = metering.ParseSparte(v[2].(string)); err != nil {
				return nil, fnError(expectedIntervalsName, err)
			}
		}
		n, err := metering.ExpectedIntervals(metering.DateOf(v[0].(time.Time)), r, s)
		if err != nil {
			return nil, fnError(expectedIntervalsName, err)
		}
		return int32(n), nil
	}}
}

func calendarDefinitions() []definition {
	day := func(name string, memo *hourMemo) definition {
		d := definition{name: name}
		for _, ts := range tsTypes {
			d.overloads = append(d.overloads, dayFunc{ts: ts, memo: memo})
		}
		return d
	}
	balancing := func(name string, memos map[metering.Sparte]*hourMemo) definition {
		d := definition{name: name}
		for _, ts := range tsTypes {
			d.overloads = append(d.overloads, balancingFunc{name: name, ts: ts, memos: memos})
		}
		return d
	}
	return []definition{
		day("meter_local_day", localDayMemo),
		day("meter_gas_day", gasDayMemo),
		balancing("meter_balancing_day", balancingDayMemos),
		day("meter_local_month", localMonthMemo),
		balancing("meter_balancing_month", balancingMonthMemos),
		{name: expectedIntervalsName, overloads: []duckdb.ScalarFunc{
			expectedIntervalsFunc{}, expectedIntervalsFunc{withSparte: true},
		}},
	}
}
