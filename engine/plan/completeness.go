package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

// meter_completeness(from, to [, table]) is not a DuckDB function: the planner
// replaces the table-function reference in the parse tree with an SQL
// statement over the table's resolved relation, which is then planned like any
// other reference — split at the watermark, confined by the session's scope,
// pinned by AsOf/AsKnownAt. So completeness counts exactly the rows a query of
// readings returns.
//
// Per series — (malo_id, obis_code [, melo_id] [, identity columns], sparte,
// resolution) with at least one resolved row on a balancing day d, from ≤ d < to
// (each row on its own Sparte's day: gas 06:00–06:00 local) — and per day of the
// range, expected = meter_expected_intervals(d, resolution, sparte) (the DST-aware
// calendar: 92/96/100 at PT15M, 1380/1440/1500 at PT1M). missing sums per-day
// shortfalls and surplus per-day excesses, never netted; first_gap is the first
// balancing day with fewer rows than expected. Series without a per-day grid
// (no resolution, P1M, P1Y) are not reported.
const completenessFunction = "meter_completeness"

// CompletenessTable picks the table meter_completeness counts among tables.
func CompletenessTable(tables []*Table, name ...string) (*Table, error) {
	if len(name) > 0 && name[0] != "" {
		for _, t := range tables {
			if strings.EqualFold(t.Config.Name(), name[0]) || strings.EqualFold(t.Config.ResolvedName(), name[0]) {
				if t.Config.TimeModel() != meterstore.Interval {
					return nil, fmt.Errorf("%s: %s holds point readings; completeness counts intervals", completenessFunction, t.Config.Name())
				}
				return t, nil
			}
		}
		return nil, fmt.Errorf("%s: no table %q in this session", completenessFunction, name[0])
	}
	var found []*Table
	for _, t := range tables {
		if t.Config.TimeModel() == meterstore.Interval {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%s: no interval table in this session", completenessFunction)
	case 1:
		return found[0], nil
	}
	var names []string
	for _, t := range found {
		names = append(names, t.Config.ResolvedName())
	}
	return nil, fmt.Errorf("%s: this session has several interval tables (%s); name one: %s(from, to, 'table')",
		completenessFunction, strings.Join(names, ", "), completenessFunction)
}

var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

// completenessSQL is the statement meter_completeness(from, to) stands for.
func completenessSQL(cfg meterstore.TableConfig, from, to metering.Date) string {
	keys := []string{"malo_id", "obis_code"}
	if cfg.IdentifyByMelo() {
		keys = append(keys, "melo_id")
	}
	for _, c := range cfg.IdentityColumns() {
		keys = append(keys, c.Name)
	}
	keys = append(keys, "sparte", "resolution")
	q := meterstore.QuoteIdents(keys)
	var on []string
	for _, k := range keys {
		on = append(on, fmt.Sprintf("g.%s IS NOT DISTINCT FROM p.%s", meterstore.QuoteIdent(k), meterstore.QuoteIdent(k)))
	}
	var gk []string
	for _, k := range keys {
		gk = append(gk, "g."+meterstore.QuoteIdent(k))
	}
	// Rows on balancing days [from, to) start at or after from's local midnight
	// and before to's 06:00 local (the gas day's end): literal bounds the planner
	// extracts, so only the files and hot partitions of the range are read.
	lo := time.Date(from.Year, from.Month, from.Day, 0, 0, 0, 0, berlin)
	hi := time.Date(to.Year, to.Month, to.Day, 6, 0, 0, 0, berlin)
	fromLit, toLit := "DATE '"+from.String()+"'", "DATE '"+to.String()+"'"
	return fmt.Sprintf(`WITH _mc_days AS (
  SELECT %[1]s, balancing_day AS d, count(*) AS n,
         count(*) FILTER (WHERE quality = 'SUBSTITUTED') AS sub,
         count(*) FILTER (WHERE NOT quality_is_billable(quality)) AS nb
  FROM main.%[2]s
  WHERE "from" >= %[3]s AND "from" < %[4]s
    AND balancing_day >= %[5]s AND balancing_day < %[6]s
    AND resolution IS NOT NULL AND resolution NOT IN ('P1M', 'P1Y')
  GROUP BY ALL
), _mc_series AS (
  SELECT DISTINCT %[1]s FROM _mc_days
), _mc_grid AS (
  SELECT s.*, CAST(c.range AS DATE) AS d,
         meter_expected_intervals(CAST(c.range AS DATE), s.resolution, s.sparte) AS e
  FROM _mc_series AS s CROSS JOIN range(CAST(%[5]s AS TIMESTAMP), CAST(%[6]s AS TIMESTAMP), INTERVAL 1 DAY) AS c
), _mc_joined AS (
  SELECT %[7]s, g.d, CAST(g.e AS BIGINT) AS e, coalesce(p.n, 0) AS n, coalesce(p.sub, 0) AS sub, coalesce(p.nb, 0) AS nb
  FROM _mc_grid AS g LEFT JOIN _mc_days AS p ON g.d = p.d AND %[8]s
)
SELECT %[1]s,
       CAST(sum(e) AS BIGINT) AS expected,
       CAST(sum(n) AS BIGINT) AS actual,
       CAST(sum(greatest(e - n, 0)) AS BIGINT) AS missing,
       CAST(sum(greatest(n - e, 0)) AS BIGINT) AS surplus,
       min(d) FILTER (WHERE n < e) AS first_gap,
       CAST(sum(sub) AS BIGINT) AS substituted,
       CAST(sum(nb) AS BIGINT) AS not_billable,
       sum(greatest(e - n, 0)) = 0 AND sum(greatest(n - e, 0)) = 0 AS complete
FROM _mc_joined
GROUP BY ALL
ORDER BY ALL`, q, meterstore.QuoteIdent(cfg.ResolvedName()), sqlTime(lo), sqlTime(hi), fromLit, toLit,
		strings.Join(gk, ", "), strings.Join(on, " AND "))
}
