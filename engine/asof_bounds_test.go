package engine_test

import (
	"testing"
	"time"

	"github.com/meterstore/meterstore/testkit"
)

// TestAsofJoinSearchesTheWholeRelation: an ASOF join matches each row of its
// left side with the nearest row of readings, and a WHERE bound or equality
// on that row drops the match after the join. Had the planner narrowed the
// relation by it, the join would find a nearer row inside the range and
// keep rows the statement drops: 20 hours matched for 5. (Only "from" is
// compared: several readings share an instant, and which of them the join
// picks is DuckDB's choice.)
// A bound on the left side filters rows each matched on their own, and
// still narrows. Compared with DuckDB's own answer over the oracle's rows.
func TestAsofJoinSearchesTheWholeRelation(t *testing.T) {
	w := testkit.NewWorkload(0xd57)
	w.MaLos, w.Days = 2, 5
	a := newArchivedStore(t, w)
	s := differentialSession{name: "UTC", e: a.s.Engine, zone: "UTC"}
	ref := oracleDuckDB(t, a, s, a.cut)
	ts := func(t time.Time) string { return "TIMESTAMPTZ '" + t.UTC().Format("2006-01-02 15:04:05") + "+00'" }
	hours := `(SELECT ` + ts(a.cut.Add(-10*time.Hour)) + ` + i * INTERVAL '1 hour' AS t FROM range(20) g(i)) x`
	for _, q := range []string{
		`SELECT count(*), min(r."from"), max(r."from") FROM ` + hours + ` ASOF JOIN readings r ON x.t >= r."from" WHERE r."from" < ` + ts(a.cut.Add(-5*time.Hour)),
		`SELECT count(*), min(r."from"), max(r."from") FROM ` + hours + ` ASOF LEFT JOIN readings r ON x.t >= r."from" WHERE r."from" < ` + ts(a.cut.Add(5*time.Hour)),
		`SELECT count(*), min(r."from"), max(r."from") FROM ` + hours + ` ASOF JOIN readings r ON x.t <= r."from" WHERE r."from" >= ` + ts(a.cut),
		`SELECT count(*), min(r."from"), max(r."from") FROM ` + hours + ` ASOF JOIN readings_versions r ON r."from" <= x.t WHERE r."from" BETWEEN ` + ts(a.cut.Add(-8*time.Hour)) + ` AND ` + ts(a.cut.Add(-2*time.Hour)),
		`SELECT count(*), sum(r.value) FROM readings l ASOF JOIN readings r ON l.malo_id = r.malo_id AND l.obis_code = r.obis_code AND l."from" > r."from"
			WHERE l."from" >= ` + ts(a.cut.Add(-3*time.Hour)) + ` AND l."from" < ` + ts(a.cut.Add(3*time.Hour)),
	} {
		requireSameAsDuckDB(t, s.e, ref, "ASOF", q)
	}
}
