// Package testhooks carries the points at which this module's tests stop the
// store inside an operation — where a crash would stop it, or to run an
// archival at exactly that instant — to store.Open through its context. The
// hooks are thereby no part of store.Config, which users build, and nothing
// outside this module can set them.
package testhooks

import (
	"context"

	"github.com/meterstore/meterstore/archive"
)

// AppendStep names the points inside store.Table.Append where Hooks.Append is
// called.
type AppendStep string

const (
	// BeforeHotBatch: before each hot write transaction.
	BeforeHotBatch AppendStep = "before-hot-batch"
	// BeforeDetachedRetry: a hot write met a partition detached for archival;
	// the boundary is about to be read again and the rest routed anew.
	BeforeDetachedRetry AppendStep = "before-detached-retry"
	// BeforeBoundaryRecheck: every row is written; the boundary is about to be
	// read the second time.
	BeforeBoundaryRecheck AppendStep = "before-boundary-recheck"
)

// SchemaStep names the points of a table's schema evolution in store.Open
// where Hooks.Schema is called.
type SchemaStep string

// AfterColdSchema: the cold table holds the added columns, PostgreSQL not yet.
const AfterColdSchema SchemaStep = "after-cold-schema"

// Hooks are called at their steps; a nil hook is skipped. A non-nil error
// stops the operation there, as a crash would.
type Hooks struct {
	Archive func(archive.Step) error
	Append  func(AppendStep)
	Schema  func(SchemaStep) error
}

type key struct{}

// With returns ctx carrying h, for store.Open.
func With(ctx context.Context, h Hooks) context.Context { return context.WithValue(ctx, key{}, h) }

// From returns the hooks ctx carries; none when it carries none.
func From(ctx context.Context) Hooks {
	h, _ := ctx.Value(key{}).(Hooks)
	return h
}
