package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/testkit"
)

// demoSeed and demoMinuteShare are msql demo's defaults, which the harness
// does not override.
const (
	demoSeed        = 0xDE30
	demoMinuteShare = 0.025
)

// checkOracle folds the workload msql demo loaded in the testkit oracle (a Go
// map fold, not SQL) and compares its resolved totals per tenant and
// balancing month with msql's, for the cold tier and for both tiers.
func (d *deployment) checkOracle(ctx context.Context, opt options, e *expected) error {
	w := testkit.Demo(demoSeed, opt.malos, opt.days, demoMinuteShare, opt.correction)
	cfg := w.IntervalTable("readings_versions").MustBuild()
	o := testkit.NewOracle(cfg)
	err := w.Stream(func(dl testkit.Delivery) error {
		if dl.Point {
			return nil
		}
		_, err := o.RecordDeliveries(dl)
		return err
	})
	if err != nil {
		return fmt.Errorf("oracle: %w", err)
	}
	wm, err := time.Parse(time.RFC3339, e.Watermark)
	if err != nil {
		return err
	}
	key := func(r meterstore.Row) string { return *r.Extra[0] + "|" + r.BalancingDay.Format("2006-01") }
	for _, c := range []struct {
		what   string
		to     time.Time
		totals []total
	}{{"cold tier", wm, e.ColdResolved}, {"both tiers", time.Time{}, e.AllResolved}} {
		want := o.Current().SumBy(time.Time{}, c.to, key)
		got := map[string]decimal.Decimal{}
		for _, t := range c.totals {
			v, err := decimal.NewFromString(t.Sum)
			if err != nil {
				return err
			}
			got[t.Tenant+"|"+t.Month] = v
		}
		if len(got) != len(want) {
			return fmt.Errorf("oracle: %s: msql has %d (tenant, month) totals, the oracle %d", c.what, len(got), len(want))
		}
		for k, v := range want {
			if !got[k].Equal(v) {
				return fmt.Errorf("oracle: %s: %s: msql %s, oracle %s", c.what, k, got[k], v)
			}
		}
	}
	return nil
}
