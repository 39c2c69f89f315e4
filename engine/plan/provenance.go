package plan

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Provenance is the boundary a result was computed against, read off the plan
// before execution: two identical statements a minute apart can read the same
// rows from different tiers, and a sum cannot say so by itself.
type Provenance struct {
	// Watermarks per table the statement actually read (resolved name).
	Watermarks map[string]time.Time
	// Watermark is the conservative one: the oldest of the tables read; below it
	// every table involved is settled. The zero time (epoch) when none was read.
	Watermark   time.Time
	Tiers       Tier
	Mode        ReadMode
	Tables      []string
	SnapshotIDs []int64
	// ColdFiles are the cold files read (a superseded file a current read
	// leaves out is not among them).
	ColdFiles int
	// ResolvedFiles of the ColdFiles are read through resolution; the others
	// have it elided (statistics or marks prove no resolution key repeats)
	// or belong to the unresolved relation.
	ResolvedFiles int
	// KnownAt is the transaction-time ceiling of an AsKnownAt read, MaxVersion
	// the version ceiling of an AsOf read; nil when none.
	KnownAt    *time.Time
	MaxVersion *uint64
	// Scope is the handle's confinement as sorted "column=value" pairs.
	Scope []string
	// TimeZone is the session time zone the statement's literals and casts
	// were evaluated in (Config.TimeZone).
	TimeZone string
	// ColdPath and HotPath name how each tier read was done: read_parquet or
	// iceberg_scan, meter_hot_scan or postgres_query ("" for a tier not read).
	ColdPath, HotPath string
	// Reused: the plan was made for an earlier run of the same statement,
	// arguments and view, and served again because the snapshots, watermarks
	// and detached partitions it pinned were re-read unchanged.
	Reused  bool
	hotRows *RowCounter
}

// DefaultTimeZone is the session time zone a provenance leaves unsaid.
const DefaultTimeZone = "UTC"

func (p *Provenance) finish() {
	sort.Strings(p.Tables)
	first := true
	for _, w := range p.Watermarks {
		if first || w.Before(p.Watermark) {
			p.Watermark, first = w, false
		}
	}
	if first {
		p.Watermark = time.Unix(0, 0).UTC()
	}
}

// TouchedHotTier reports whether the answer depends on the moment it ran: true
// when any row could have come from PostgreSQL.
func (p *Provenance) TouchedHotTier() bool { return p.Tiers&Hot != 0 }

// SpansTiers reports whether both tiers were read.
func (p *Provenance) SpansTiers() bool { return p.Tiers == Cold|Hot }

// HotRows is the number of rows streamed from PostgreSQL so far.
func (p *Provenance) HotRows() int64 {
	if p.hotRows == nil {
		return 0
	}
	return p.hotRows.Get()
}

// String is the one-line form the shell prints under a result.
func (p *Provenance) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "watermark %s", p.Watermark.UTC().Format(time.RFC3339))
	if len(p.Watermarks) > 1 {
		var parts []string
		for _, t := range p.Tables {
			parts = append(parts, t+"="+p.Watermarks[t].UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, " · tiers %s · mode %s", p.Tiers, p.Mode)
	if via := strings.Join(nonEmpty(p.ColdPath, p.HotPath), "+"); via != "" {
		fmt.Fprintf(&b, " · via %s", via)
	}
	if len(p.SnapshotIDs) > 0 {
		fmt.Fprintf(&b, " · snapshot %d", p.SnapshotIDs[0])
	}
	if p.MaxVersion != nil {
		fmt.Fprintf(&b, " · versions ≤ %d", *p.MaxVersion)
	}
	if p.KnownAt != nil {
		fmt.Fprintf(&b, " · known at %s", p.KnownAt.UTC().Format(time.RFC3339))
	}
	if p.TimeZone != "" && p.TimeZone != DefaultTimeZone {
		// UTC, the default, goes unsaid; any other zone changed what the
		// statement's literals meant.
		fmt.Fprintf(&b, " · time zone %s", p.TimeZone)
	}
	return b.String()
}

func nonEmpty(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
