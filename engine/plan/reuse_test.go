package plan

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/sqltext"
)

// TestAgainOpensColdFilesWithItsOwnRun: a reused plan's cold scan opens its
// files with the context its own run sets, not the context of the run the
// plan was made in (which has ended, so object storage refused every read
// with "context canceled").
func TestAgainOpensColdFilesWithItsOwnRun(t *testing.T) {
	made, cancel := context.WithCancel(context.Background())
	p := &Plan{registry: &registry{}}
	ps := &Scan{Ctx: made, What: "cold scan", Rows: &RowCounter{}}
	ps.Pager = coldFiles{ps: ps}
	p.register(ps)
	p.SQL = "SELECT * FROM meter_cold_scan(" + sqltext.String(p.tokens[0]) + ")"
	cancel()

	again := p.Template().Again(context.Background())
	run := context.Background()
	again.Scans[0].Ctx = run
	pager, ok := again.Scans[0].Pager.(coldFiles)
	require.True(t, ok)
	require.Same(t, again.Scans[0], pager.ps, "the reused scan's pager must read the reused scan's context")
	require.NoError(t, pager.ps.Ctx.Err())
}

// feeds is a Feeder that records what it was handed, by token.
type feeds struct {
	ctxs map[string]context.Context
	rels map[string][]string
	live map[string]bool
	n    int
}

func (f *feeds) Streams() int { return 2 }

func (f *feeds) Feed(ctx context.Context, cfg meterstore.TableConfig, rels []string) (string, string) {
	f.n++
	tok := fmt.Sprintf("fed%d", f.n)
	f.ctxs[tok], f.rels[tok], f.live[tok] = ctx, rels, true
	return "SELECT * FROM meter_fed_scan(" + sqltext.String(tok) + ")", tok
}

func (f *feeds) Unfeed(tok string) { delete(f.live, tok) }

// TestAgainFeedsAnew: a reused plan feeds its cold half anew with its own
// run's context, under a token of its own that its statement names, and the
// fed relations read the run's own cold scan — never the tokens of the run
// the plan was made in, which ended with that run.
func TestAgainFeedsAnew(t *testing.T) {
	f := &feeds{ctxs: map[string]context.Context{}, rels: map[string][]string{}, live: map[string]bool{}}
	p := &Plan{registry: &registry{}, feeder: f}
	made := context.WithValue(context.Background(), f, "made")
	ps := &Scan{Ctx: made, What: "cold scan", Rows: &RowCounter{}}
	p.register(ps)
	p.SQL = "SELECT * FROM (" + p.feed(made, meterstore.TableConfig{}, []string{"SELECT * FROM meter_cold_scan(" + sqltext.String(p.tokens[0]) + ")"}) + ")"
	tmpl := p.Template()
	p.Release()
	require.Empty(t, f.live)

	run := context.WithValue(context.Background(), f, "run")
	again := tmpl.Again(run)
	require.Len(t, again.fed, 1)
	tok := again.fed[0].token
	require.NotEqual(t, tmpl.fed[0].token, tok)
	require.Equal(t, "SELECT * FROM (SELECT * FROM meter_fed_scan("+sqltext.String(tok)+"))", again.SQL)
	require.Same(t, run, f.ctxs[tok], "fed with the run's context")
	require.Equal(t, []string{"SELECT * FROM meter_cold_scan(" + sqltext.String(again.tokens[0]) + ")"}, f.rels[tok], "the fed relation reads the run's own scan")
	require.NotEqual(t, tmpl.tokens[0], again.tokens[0])
	require.True(t, f.live[tok])
	again.Release()
	require.Empty(t, f.live, "the run's fed half ends with it")
}
