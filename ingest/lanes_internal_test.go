package ingest

import (
	"slices"
	"testing"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
)

// channelBatch is a batch of the channels (MaLo, 1-0:1.29.0) named, its rows
// from "from".
func channelBatch(t *testing.T, label string, from time.Time, malos ...string) batch {
	t.Helper()
	obis, err := metering.ParseObis("1-0:1.29.0")
	if err != nil {
		t.Fatal(err)
	}
	b := batch{label: label, rows: len(malos), lo: from, hi: from}
	for _, m := range malos {
		malo, err := metering.ParseMaloID(m)
		if err != nil {
			t.Fatal(err)
		}
		b.series = append(b.series, meterstore.StoredSeries{Delivery: metering.Delivery{MaloID: malo, Obis: obis}})
	}
	return b
}

func labels(bs []batch) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.label)
	}
	return out
}

// The batches for PostgreSQL go to the lane of their channel, each lane in
// file order; a batch below the watermark is no lane's. 41373559241 and
// 51238696781 share a lane, 10000000017 is in the other (hot.LockBucket).
func TestSplitLanesByChannel(t *testing.T) {
	w := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	above, below := w.Add(time.Hour), w.Add(-time.Hour)
	bs := []batch{
		channelBatch(t, "A1", above, "41373559241"),
		channelBatch(t, "C1", above, "10000000017"),
		channelBatch(t, "cold", below, "41373559241"),
		channelBatch(t, "B1", above, "51238696781"),
		channelBatch(t, "A2", above, "41373559241"),
	}
	lanes, others := splitLanes(bs, w)
	if got := labels(others); len(got) != 1 || got[0] != "cold" {
		t.Fatalf("others: %v, want [cold]", got)
	}
	ab := laneOf(bs[0])
	if got, want := labels(lanes[ab]), []string{"A1", "B1", "A2"}; !slices.Equal(got, want) {
		t.Fatalf("lane %d: %v, want %v", ab, got, want)
	}
	if got, want := labels(lanes[1-ab]), []string{"C1"}; !slices.Equal(got, want) {
		t.Fatalf("lane %d: %v, want %v", 1-ab, got, want)
	}
}

// A batch of channels of both lanes puts a channel in two lanes: then which
// of its deliveries wins would depend on timing, so every batch for
// PostgreSQL goes in one lane, in file order.
func TestSplitLanesKeepsFileOrderWhenAChannelCrossesLanes(t *testing.T) {
	w := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	above := w.Add(time.Hour)
	bs := []batch{
		channelBatch(t, "C1", above, "10000000017"),
		channelBatch(t, "AC", above, "41373559241", "10000000017"),
		channelBatch(t, "C2", above, "10000000017"),
	}
	if laneOf(bs[0]) == laneOf(bs[1]) {
		t.Fatal("the test needs AC's first channel in the other lane than C's")
	}
	lanes, _ := splitLanes(bs, w)
	if len(lanes) != 1 || !slices.Equal(labels(lanes[0]), []string{"C1", "AC", "C2"}) {
		t.Fatalf("lanes: %v, want one lane [C1 AC C2]", lanes)
	}
}

// A batch below the watermark whose interval of a channel reaches above it
// may overlap that channel's rows in PostgreSQL: then every batch goes in
// one lane in file order, the ones for Iceberg too. One that ends at the
// watermark, or reaches above it for a channel no batch for PostgreSQL
// holds, leaves the lanes as they are.
func TestSplitLanesKeepsFileOrderWhenACorrectionReachesAboveTheWatermark(t *testing.T) {
	w := time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC)
	above := w.Add(time.Hour)
	day := func(label, malo string, to time.Time) batch {
		b := channelBatch(t, label, w.Add(-time.Hour), malo)
		b.series[0].Intervals = []metering.Interval{{From: b.lo, To: to}}
		return b
	}
	bs := []batch{
		channelBatch(t, "C1", above, "10000000017"),
		day("A-day", "41373559241", w),
		day("B-day", "51238696781", w.Add(23*time.Hour)),
		channelBatch(t, "A1", above, "41373559241"),
	}
	lanes, others := splitLanes(bs, w)
	if got := labels(others); !slices.Equal(got, []string{"A-day", "B-day"}) {
		t.Fatalf("others: %v, want [A-day B-day]: A's day ends at the watermark, no batch for PostgreSQL holds B", got)
	}
	if len(lanes) != hotWriters {
		t.Fatalf("lanes: %v, want %d", lanes, hotWriters)
	}
	bs = append(bs, channelBatch(t, "B1", above, "51238696781"))
	lanes, others = splitLanes(bs, w)
	if len(others) != 0 || len(lanes) != 1 || !slices.Equal(labels(lanes[0]), labels(bs)) {
		t.Fatalf("lanes %v, others %v: want one lane %v", lanes, labels(others), labels(bs))
	}
}
