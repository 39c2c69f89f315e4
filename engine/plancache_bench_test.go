package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/storetest"
)

// BenchmarkOneMeter is the cost of one meter's rows over both tiers (62 days
// of 20 MaLos, all but the last two archived), bound as a client binds them
// and run to the end through Query (query) or only planned and bound by
// DuckDB (describe): the fixed cost pgbench's single-meter reads pay on
// every statement.
//
//	go test -run '^$' -bench OneMeter ./engine/
func BenchmarkOneMeter(b *testing.B) {
	a := newArchivedStoreWith(b, testkit.Workload{Seed: 7, MaLos: 20, Days: 62}, storetest.Options{})
	malo := a.batch.Deliveries[0].Series.MaloID.String()
	lo, hi := a.batch.Days[len(a.batch.Days)-5].Time(), a.batch.Days[len(a.batch.Days)-1].AddDays(1).Time()
	q := `SELECT "from", obis_code, value FROM readings WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3 ORDER BY "from", obis_code`
	ctx := context.Background()
	b.Run("query", func(b *testing.B) {
		for b.Loop() {
			res, err := a.s.Engine.Query(ctx, q, malo, lo, hi)
			require.NoError(b, err)
			require.NotEmpty(b, res.Rows)
		}
	})
	b.Run("describe", func(b *testing.B) {
		for b.Loop() {
			_, err := a.s.Engine.Describe(ctx, q, malo, lo, hi)
			require.NoError(b, err)
		}
	})
}

// BenchmarkOneMeterScoped is BenchmarkOneMeter's statement in a session
// scoped to the meter's tenant (its confined database, the cold half fed)
// and unscoped with the tenant in its WHERE: the fixed costs a scoped
// session pays that an unscoped one does not.
//
//	go test -run '^$' -bench OneMeterScoped ./engine/
func BenchmarkOneMeterScoped(b *testing.B) {
	a := newArchivedStoreWith(b, testkit.Workload{Seed: 7, MaLos: 20, Days: 62, Tenants: 2}, storetest.Options{})
	meter := a.batch.Meters[0]
	malo := meter.MaloID.String()
	lo, hi := a.batch.Days[len(a.batch.Days)-5].Time(), a.batch.Days[len(a.batch.Days)-1].AddDays(1).Time()
	q := `SELECT "from", obis_code, value FROM readings WHERE malo_id = $1 AND "from" >= $2 AND "from" < $3%s ORDER BY "from", obis_code`
	ctx := context.Background()
	scoped, err := a.s.Engine.Scoped("tenant", meter.Tenant)
	require.NoError(b, err)
	for _, side := range []struct {
		name string
		run  func() (*engine.Result, error)
	}{
		{"unscoped", func() (*engine.Result, error) {
			return a.s.Engine.Query(ctx, fmt.Sprintf(q, ` AND tenant = $4`), malo, lo, hi, meter.Tenant)
		}},
		{"scoped", func() (*engine.Result, error) { return scoped.Query(ctx, fmt.Sprintf(q, ""), malo, lo, hi) }},
	} {
		b.Run(side.name, func(b *testing.B) {
			for b.Loop() {
				res, err := side.run()
				require.NoError(b, err)
				require.NotEmpty(b, res.Rows)
			}
		})
	}
}
