package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/testkit"
)

// spanningCount counts and sums one tenant's readings from $1 on: both tiers,
// the cold half fed, the hot half through meter_hot_scan.
const spanningCount = `SELECT count(*), sum(value) FROM readings WHERE "from" >= $1`

// tenantAnswer is spanningCount's answer for tenant, as the unrestricted
// handle computes it.
func tenantAnswer(t *testing.T, e *engine.Engine, tenant string, from time.Time) [][]any {
	t.Helper()
	res, err := e.Query(context.Background(), spanningCount+` AND tenant = $2`, from, tenant)
	require.NoError(t, err)
	require.NotZero(t, res.Rows[0][0], "%s has readings from %s", tenant, from)
	return res.Rows
}

// scopedAnswer is spanningCount's answer in a session scoped to tenant.
func scopedAnswer(e *engine.Engine, tenant string, from time.Time) (*engine.Result, error) {
	sc, err := e.Scoped("tenant", tenant)
	if err != nil {
		return nil, err
	}
	return sc.Query(context.Background(), spanningCount, from)
}

// scopedRun runs spanningCount in a session scoped to tenant, checks its
// answer against want and says whether the plan was reused.
func scopedRun(t *testing.T, e *engine.Engine, tenant string, from time.Time, want [][]any) bool {
	t.Helper()
	res, err := scopedAnswer(e, tenant, from)
	require.NoError(t, err, tenant)
	require.Equal(t, want, res.Rows, "%s's answer", tenant)
	require.True(t, res.Provenance.SpansTiers())
	return res.Provenance.Reused
}

// TestConfinedPlanServesItsScopeOnly: a confined session's statement is
// served the plan made for it on its next run, in any session of that scope
// — and a session of another scope, with the same statement and arguments,
// is planned for its own scope and answers with its own rows, also when the
// two scopes run the statement at once.
func TestConfinedPlanServesItsScopeOnly(t *testing.T) {
	w := testkit.NewWorkload(0x3A)
	w.MaLos, w.Tenants = 6, 2
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	lo := a.batch.Days[0].Time()
	want := map[string][][]any{}
	for _, tenant := range []string{"tenant01", "tenant02"} {
		want[tenant] = tenantAnswer(t, eng, tenant, lo)
	}
	require.NotEqual(t, want["tenant01"], want["tenant02"])

	require.False(t, scopedRun(t, eng, "tenant01", lo, want["tenant01"]), "the first run plans")
	kept01 := fedKeptOf(t, eng, "tenant01")
	requireKept(t, eng, kept01)
	require.True(t, scopedRun(t, eng, "tenant01", lo, want["tenant01"]), "a session of the same scope reuses the plan")
	require.ElementsMatch(t, kept01, fedKeptOf(t, eng, "tenant01"), "the reused plan ran the statements kept, preparing none")
	require.False(t, scopedRun(t, eng, "tenant02", lo, want["tenant02"]), "another scope is planned anew")
	kept02 := fedKeptOf(t, eng, "tenant02")
	require.Len(t, kept02, len(kept01), "another scope's relations are its own statements")
	require.True(t, scopedRun(t, eng, "tenant02", lo, want["tenant02"]))
	require.True(t, scopedRun(t, eng, "tenant01", lo, want["tenant01"]), "the other scope's plan did not replace this one")
	require.ElementsMatch(t, append(kept01, kept02...), engine.FedStatementsKept(eng))

	requireAtOnce(t, eng, lo, want, true)
	require.Len(t, engine.FedStatementsKept(eng), len(fedKeptOf(t, eng, "tenant01"))+len(fedKeptOf(t, eng, "tenant02")))
	require.GreaterOrEqual(t, len(fedKeptOf(t, eng, "tenant01")), len(kept01), "runs at once each took a statement of their own, all given back")
}

// requireAtOnce runs spanningCount three times on each of three goroutines
// per tenant of want, all at once, and requires each answer to be the
// tenant's own — and, with reused, each plan a reused one.
func requireAtOnce(t *testing.T, eng *engine.Engine, lo time.Time, want map[string][][]any, reused bool) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 9*len(want))
	for range 3 {
		for tenant := range want {
			wg.Go(func() {
				for range 3 {
					res, err := scopedAnswer(eng, tenant, lo)
					switch {
					case err != nil:
						errs <- err
					case !reflect.DeepEqual(res.Rows, want[tenant]):
						errs <- fmt.Errorf("%s answered %v at once with others, want %v", tenant, res.Rows, want[tenant])
					case reused && !res.Provenance.Reused:
						errs <- fmt.Errorf("%s: a run at once with others was planned anew", tenant)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// keepsFedStatements is whether e keeps its fed relations prepared: not
// where cold files on object storage are read through meter_cold_scan (no
// httpfs), whose relations name a run's own token and never come again.
func keepsFedStatements(e *engine.Engine) bool {
	return e.Extensions().ObjectStore != plan.MeterColdScan
}

// requireKept: a run's fed relations are kept prepared where e keeps them,
// and none is where it cannot.
func requireKept(t *testing.T, e *engine.Engine, kept []string) {
	t.Helper()
	if keepsFedStatements(e) {
		require.NotEmpty(t, kept, "the run's fed relations are kept prepared")
	} else {
		require.Empty(t, kept, "a relation naming a run's meter_cold_scan token is not kept")
	}
}

// fedKeptOf is the fed relations kept prepared in e's database whose text
// scopes them to tenant; it fails if a kept relation names two tenants.
func fedKeptOf(t *testing.T, e *engine.Engine, tenant string) []string {
	t.Helper()
	var out []string
	for _, q := range engine.FedStatementsKept(e) {
		names := strings.Count(q, "'tenant0")
		if strings.Contains(q, "'"+tenant+"'") {
			require.Equal(t, strings.Count(q, "'"+tenant+"'"), names, "a kept relation of %s names another tenant: %s", tenant, q)
			out = append(out, q)
		}
	}
	return out
}

// TestConfinedPlanAfterReopen: with room for one confined database, each
// tenant's turn closes the other's database and reopens its own. A plan made
// in the closed database is not served to the reopened one (it is planned
// anew there), and then reused there, each answer the tenant's own.
func TestConfinedPlanAfterReopen(t *testing.T) {
	w := testkit.NewWorkload(0x3B)
	w.MaLos, w.Tenants = 4, 2
	a := newArchivedStore(t, w)
	e := oneConfinedDatabase(t, a)
	lo := a.batch.Days[0].Time()
	want := map[string][][]any{}
	for _, tenant := range []string{"tenant01", "tenant02"} {
		want[tenant] = tenantAnswer(t, e, tenant, lo)
	}
	for turn := range 3 {
		for _, tenant := range []string{"tenant01", "tenant02"} {
			require.False(t, scopedRun(t, e, tenant, lo, want[tenant]), "turn %d, %s: the reopened database plans anew", turn, tenant)
			require.True(t, scopedRun(t, e, tenant, lo, want[tenant]), "turn %d, %s: reused in the reopened database", turn, tenant)
		}
	}
}

// TestConfinedPlanAfterArchival: a reused confined plan is planned anew once
// an archival moved the watermark (rows moved from the hot half to the fed
// cold half), and the answer stays the tenant's, before and after.
func TestConfinedPlanAfterArchival(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(0x3C)
	w.MaLos, w.Tenants = 6, 2
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	lo := a.batch.Days[0].Time()
	want := tenantAnswer(t, eng, "tenant01", lo)
	require.False(t, scopedRun(t, eng, "tenant01", lo, want))
	require.True(t, scopedRun(t, eng, "tenant01", lo, want))
	before := engine.FedStatementsKept(eng)
	requireKept(t, eng, before)

	last := a.batch.Days[len(a.batch.Days)-1]
	out, err := a.tbl.Archiver.Archive(ctx, last.Time().Add(a.cfg.SettlementLag()), 0)
	require.NoError(t, err)
	require.True(t, out.Watermark.After(a.cut), "the archival moved the watermark past %s: %s", a.cut, out.Watermark)

	sc, err := eng.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	res, err := sc.Query(ctx, spanningCount, lo)
	require.NoError(t, err)
	require.Equal(t, want, res.Rows, "the same rows, now more of them cold")
	require.False(t, res.Provenance.Reused, "the watermark moved: planned anew")
	require.True(t, res.Provenance.Watermark.Equal(out.Watermark))
	after := engine.FedStatementsKept(eng)
	if keepsFedStatements(eng) {
		require.Greater(t, len(after), len(before), "the new plan's relations read the archived files: statements of their own")
	}
	res, err = sc.Query(ctx, spanningCount, lo)
	require.NoError(t, err)
	require.Equal(t, want, res.Rows)
	require.True(t, res.Provenance.Reused)
	require.True(t, res.Provenance.Watermark.Equal(out.Watermark))
	require.ElementsMatch(t, after, engine.FedStatementsKept(eng), "the reused plan ran the statements kept")
}

// TestConfinedKeptStatementServesItsPlanOnly: a confined plan's statement is
// prepared once and kept in its scope's database, and the plan's next run
// runs it — the text kept names the first run's tokens, through which the
// run reads its own scans and fed halves. Another scope with the same
// statement and arguments keeps a statement of its own and answers its own
// rows, also when both run at once; a kept statement's tokens name nothing
// between runs; and once an archival moved the watermark, the new plan
// prepares a statement of its own.
func TestConfinedKeptStatementServesItsPlanOnly(t *testing.T) {
	ctx := context.Background()
	w := testkit.NewWorkload(0x3D)
	w.MaLos, w.Tenants = 6, 2
	a := newArchivedStore(t, w)
	eng := a.s.Engine
	lo := a.batch.Days[0].Time()
	tenants := []string{"tenant01", "tenant02"}
	want, kept := map[string][][]any{}, map[string][]string{}
	for _, tenant := range tenants {
		want[tenant] = tenantAnswer(t, eng, tenant, lo)
		require.False(t, scopedRun(t, eng, tenant, lo, want[tenant]), "%s: the first run plans", tenant)
		kept[tenant] = mainKeptOf(t, eng, tenant)
		require.Len(t, kept[tenant], 1, "%s: the first run's statement is kept", tenant)
	}
	require.NotEqual(t, want["tenant01"], want["tenant02"])
	require.NotEqual(t, kept["tenant01"], kept["tenant02"], "each scope's statement names its own run's tokens")
	for _, tenant := range tenants {
		require.True(t, scopedRun(t, eng, tenant, lo, want[tenant]), "%s reuses its plan", tenant)
		require.Equal(t, kept[tenant], mainKeptOf(t, eng, tenant), "%s: the reused plan ran the statement kept, preparing none", tenant)
	}

	requireAtOnce(t, eng, lo, want, false)
	for _, tenant := range tenants {
		require.Contains(t, mainKeptOf(t, eng, tenant), kept[tenant][0], "%s: the statement kept first is kept still", tenant)
	}

	sc, err := eng.Scoped("tenant", "tenant01")
	require.NoError(t, err)
	conn, _, err := engine.ConfinedConn(ctx, sc)
	require.NoError(t, err)
	_, err = conn.QueryContext(ctx, kept["tenant01"][0])
	conn.Close()
	require.ErrorContains(t, err, "unknown or expired", "a kept statement's tokens name nothing between runs")

	before := mainKeptOf(t, eng, "tenant01")
	last := a.batch.Days[len(a.batch.Days)-1]
	out, err := a.tbl.Archiver.Archive(ctx, last.Time().Add(a.cfg.SettlementLag()), 0)
	require.NoError(t, err)
	require.True(t, out.Watermark.After(a.cut), "the archival moved the watermark past %s: %s", a.cut, out.Watermark)
	require.False(t, scopedRun(t, eng, "tenant01", lo, want["tenant01"]), "the watermark moved: planned anew")
	after := mainKeptOf(t, eng, "tenant01")
	require.Len(t, after, len(before)+1, "the new plan's statement is kept beside the old plan's")
	require.NotContains(t, before, after[0], "the new plan prepared a statement of its own")
	require.True(t, scopedRun(t, eng, "tenant01", lo, want["tenant01"]))
	require.Equal(t, after, mainKeptOf(t, eng, "tenant01"), "the new plan's next run ran its statement kept")
}

// mainKeptOf is the statements the confined database of tenant's scope keeps
// prepared.
func mainKeptOf(t *testing.T, e *engine.Engine, tenant string) []string {
	t.Helper()
	sc, err := e.Scoped("tenant", tenant)
	require.NoError(t, err)
	return engine.MainStatementsKept(sc)
}
