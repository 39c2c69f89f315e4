package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/store"
)

// retries bounds how often a write is tried again after a write that
// changed nothing and may simply be retried (store.IsRetryable, a lost
// commit race).
const retries = 3

// coldGroupRows bounds the rows of batches below the watermark written to
// Iceberg in one append.
const coldGroupRows = 200_000

// write puts one file's batches into the store: the history the bulk path
// may take in one commit, the rest batch by batch through the routed write,
// split at the watermark that commit leaves.
func (im *importer) write(ctx context.Context, file string, bs []batch) error {
	if len(bs) == 0 {
		return nil
	}
	w, err := im.tbl.Watermark(ctx)
	if err != nil {
		return fmt.Errorf("import %s: %w", file, err)
	}
	bulk, rest, until, err := im.planBulk(ctx, w, bs)
	if err != nil {
		return fmt.Errorf("import %s: %w", file, err)
	}
	if im.opt.DryRun {
		if len(bulk) > 0 && until.After(w) {
			w = until
		}
		im.countDryRun(bulk, im.splitAtWatermark(file, rest, w), w)
		return nil
	}
	if len(bulk) > 0 {
		if err := im.writeBulk(ctx, bulk, until); err != nil {
			im.rep.Notes = append(im.rep.Notes, fmt.Sprintf("%s: history path not taken, its %d batches went through the routed write: %v", file, len(bulk), err))
			rest = append(bulk, rest...)
		} else {
			im.progress(file)
		}
	}
	return im.writeRestAtWatermark(ctx, file, rest)
}

// countDryRun reports what a write would put where: bulk as history, the
// rest split at the watermark w the history commit would leave.
func (im *importer) countDryRun(bulk, rest []batch, w time.Time) {
	for _, b := range bulk {
		im.accept(b)
		im.rep.ColdRows += b.rows
		im.rep.BulkRows += b.rows
	}
	if len(bulk) > 0 {
		im.rep.BulkCommits++
	}
	for _, b := range rest {
		below := b.rowsBelow(w)
		im.accept(b)
		im.rep.ColdRows += below
		im.rep.HotRows += b.rows - below
	}
}

// writeRestAtWatermark writes the batches the bulk path did not take, split
// at the watermark as it is now: a bulk commit just before moved it, maybe
// over the first rows of a batch read whole above the watermark it read —
// routed as one, that batch's rows below would go to Iceberg before its
// rows above were refused in PostgreSQL.
func (im *importer) writeRestAtWatermark(ctx context.Context, file string, rest []batch) error {
	w, err := im.tbl.Watermark(ctx)
	if err != nil {
		return fmt.Errorf("import %s: %w", file, err)
	}
	return im.writeRest(ctx, file, im.splitAtWatermark(file, rest, w), w)
}

// hotWriters is how many groups of batches are written to PostgreSQL at
// once, one per lane (laneOf). A hot write's time is its COPY into the
// constrained table — PostgreSQL's CPU, the exclusion constraints' index
// inserts — so a second transaction runs on a second core beside the first;
// groups never share a batch, and the lanes hold disjoint advisory-lock
// buckets (hot.LockBucket), so neither waits for the other's commit.
const hotWriters = 2

// writeRest writes the batches the bulk path did not take. Batches wholly on
// one side of the watermark w are written together: above it as many as one
// hot transaction holds (HotBatchRows; a larger batch alone, still in one
// transaction), below it up to coldGroupRows in one Iceberg append. Either
// way all of them or none is written, and on a refusal each is written again
// alone, so the good ones go in. A batch across the watermark (moved since it
// was split) is written alone. The groups for PostgreSQL are written one
// lane per writer (splitLanes), the lanes side by side, each lane's groups
// in file order; the others one after the other.
func (im *importer) writeRest(ctx context.Context, file string, rest []batch, w time.Time) error {
	lanes, others := splitLanes(rest, w)
	g, gctx := errgroup.WithContext(ctx)
	for _, lane := range lanes {
		groups := groupBatches(lane, w, im.tbl.HotBatchRows())
		g.Go(func() error {
			for _, grp := range groups {
				if err := im.writeGroupOrEach(gctx, file, grp); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, grp := range groupBatches(others, w, im.tbl.HotBatchRows()) {
		if err := im.writeGroupOrEach(gctx, file, grp); err != nil {
			return errors.Join(err, g.Wait())
		}
	}
	return g.Wait()
}

// splitLanes splits the batches wholly at or above the watermark w — those
// for PostgreSQL — by lane (laneOf), each lane in file order, from the
// others, in file order. Which delivery of a channel (malo_id, obis_code)
// wins or is refused must not depend on timing, so the batches of a channel
// are written one after the other in file order: when a channel is in
// batches of two lanes (a batch of several channels), every batch for
// PostgreSQL goes in one lane; when a batch below w holds an interval of a
// channel reaching above w — where it may overlap that channel's rows in
// PostgreSQL — and a batch for PostgreSQL holds the same channel, every
// batch goes in one lane, the ones for Iceberg too.
func splitLanes(bs []batch, w time.Time) (lanes [][]batch, others []batch) {
	var above []batch
	lanes = make([][]batch, hotWriters)
	laneOfChannel := map[string]int{}
	reaching := map[string]bool{}
	crossing := false
	for _, b := range bs {
		if b.lo.Before(w) {
			others = append(others, b)
			b.reachingAbove(w, reaching)
			continue
		}
		i := laneOf(b)
		for _, s := range b.series {
			k := seriesChannel(s)
			if j, ok := laneOfChannel[k]; ok && j != i {
				crossing = true
			}
			laneOfChannel[k] = i
		}
		above = append(above, b)
		lanes[i] = append(lanes[i], b)
	}
	for k := range reaching {
		if _, ok := laneOfChannel[k]; ok {
			return [][]batch{bs}, nil
		}
	}
	if crossing {
		return [][]batch{above}, others
	}
	return lanes, others
}

// seriesChannel is the channel of a delivery: malo_id and obis_code.
func seriesChannel(s meterstore.StoredSeries) string {
	return s.MaloID.String() + "|" + s.Obis.String()
}

// span is the time a delivery's rows cover: from its first "from" to its
// last "to" (or instant), both ends included; the zero span covers nothing.
type span struct{ lo, hi time.Time }

// widen makes sp cover from to to as well.
func (sp *span) widen(from, to time.Time) {
	if sp.lo.IsZero() || from.Before(sp.lo) {
		sp.lo = from
	}
	if to.After(sp.hi) {
		sp.hi = to
	}
}

func spanOf(s meterstore.StoredSeries) span {
	var sp span
	for _, iv := range s.Intervals {
		sp.widen(iv.From, iv.To)
	}
	for _, r := range s.Readings {
		sp.widen(r.At, r.At)
	}
	return sp
}

func (a span) meets(b span) bool { return !a.lo.After(b.hi) && !b.lo.After(a.hi) }

// cover widens the time b covers of the channel of s to cover s.
func (b *batch) cover(s meterstore.StoredSeries) {
	if b.spans == nil {
		b.spans = map[string]span{}
	}
	k, o := seriesChannel(s), spanOf(s)
	sp := b.spans[k]
	sp.widen(o.lo, o.hi)
	b.spans[k] = sp
}

// channelSpans is the time b's deliveries cover, by channel: as its read
// kept it (the streamed path's first read keeps no series), else from its
// series.
func (b batch) channelSpans() map[string]span {
	if b.spans != nil {
		return b.spans
	}
	for _, s := range b.series {
		b.cover(s)
	}
	return b.spans
}

// meets reports whether b covers time of a channel that a span of that
// channel in spans covers.
func (b batch) meets(spans map[string][]span) bool {
	for k, sp := range b.channelSpans() {
		for _, o := range spans[k] {
			if sp.meets(o) {
				return true
			}
		}
	}
	return false
}

// reachingAbove adds to channels those of b's deliveries with an interval
// ending above w.
func (b batch) reachingAbove(w time.Time, channels map[string]bool) {
	for _, s := range b.series {
		for _, iv := range s.Intervals {
			if iv.To.After(w) {
				channels[seriesChannel(s)] = true
				break
			}
		}
	}
}

// groupBatches cuts bs into groups, each written in one routed write: runs
// of batches on one side of the watermark w, up to hotLimit rows above it
// and coldGroupRows below; a batch across w is a group of its own.
func groupBatches(bs []batch, w time.Time, hotLimit int) [][]batch {
	var out [][]batch
	var cur []batch
	rows, side := 0, 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur, rows = nil, 0
	}
	for _, b := range bs {
		s, limit := 0, 0
		switch {
		case !b.lo.Before(w):
			s, limit = 1, hotLimit
		case b.hi.Before(w):
			s, limit = 2, coldGroupRows
		}
		if s != side || rows+b.rows > limit {
			flush()
		}
		side = s
		cur = append(cur, b)
		rows += b.rows
	}
	flush()
	return out
}

// writeGroupOrEach writes the batches in one routed write, or — when the
// store refuses that — each alone, so that only the bad ones are refused.
func (im *importer) writeGroupOrEach(ctx context.Context, file string, bs []batch) error {
	if len(bs) > 1 {
		done, err := im.writeGroup(ctx, bs)
		if err != nil || done {
			im.progress(file)
			return err
		}
	}
	for _, b := range bs {
		if err := im.writeBatch(ctx, b); err != nil {
			return err
		}
	}
	im.progress(file)
	return nil
}

// writeGroup writes batches in one routed write. done is false when the
// store refused it: nothing of it was written, and each batch is to be
// written alone.
func (im *importer) writeGroup(ctx context.Context, bs []batch) (done bool, err error) {
	var series []meterstore.StoredSeries
	for _, b := range bs {
		series = append(series, b.series...)
	}
	out, err := im.appendRetrying(ctx, series)
	if err != nil {
		if refusal(err) {
			return false, nil
		}
		return false, fmt.Errorf("import %s: %s … %s: %w", bs[0].file, bs[0].label, bs[len(bs)-1].label, err)
	}
	for _, b := range bs {
		im.accept(b)
	}
	im.tally(out)
	return true, nil
}

// appendRetrying is the routed write, its rows above the watermark in one
// PostgreSQL transaction whatever their number (store.Table.AppendWhole), again
// after a write that changed nothing and may simply be retried
// (store.IsRetryable, a lost commit race).
func (im *importer) appendRetrying(ctx context.Context, series []meterstore.StoredSeries) (store.AppendOutcome, error) {
	for attempt := 0; ; attempt++ {
		out, err := im.tbl.AppendWhole(ctx, series...)
		if err == nil || attempt == retries || !(store.IsRetryable(err) || errors.Is(err, catalog.ErrCommitConflict)) {
			return out, err
		}
	}
}

// planBulk picks the batches the bulk history path takes: every row at or
// above the watermark w and below B, the lower of the first partition
// PostgreSQL holds a row in and now minus the settlement lag (a partition
// boundary, as windows end at one) — but not a batch meeting an earlier
// batch not taken, of the same channel over the same time: the bulk commit
// comes before the routed write, and which of two such deliveries wins or
// is refused follows file order. until is where the commit moves the
// watermark: the end of the partition of the latest row taken, not past B.
func (im *importer) planBulk(ctx context.Context, w time.Time, bs []batch) (bulk, rest []batch, until time.Time, err error) {
	limit, err := im.bulkLimit(ctx)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	var latest time.Time
	routed := map[string][]span{} // what batches left to the routed write hold, by channel
	for _, b := range bs {
		if !b.lo.Before(w) && b.hi.Before(limit) && !b.meets(routed) {
			bulk = append(bulk, b)
			if b.hi.After(latest) {
				latest = b.hi
			}
			continue
		}
		rest = append(rest, b)
		for k, sp := range b.channelSpans() {
			routed[k] = append(routed[k], sp)
		}
	}
	if len(bulk) == 0 {
		return nil, bs, time.Time{}, nil
	}
	return bulk, rest, im.tbl.Hot().PartitionStart(latest).Add(im.cfg.PartitionStep()), nil
}

// bulkLimit is where the bulk history path ends: the lower of the first
// partition PostgreSQL holds a row in and now minus the settlement lag.
func (im *importer) bulkLimit(ctx context.Context) (time.Time, error) {
	h := im.tbl.Hot()
	limit := h.PartitionStart(im.opt.Now().Add(-im.cfg.SettlementLag()))
	parts, err := h.Partitions(ctx)
	if err != nil {
		return time.Time{}, err
	}
	for _, p := range parts {
		if !p.From.Before(limit) {
			break
		}
		n, err := h.CountRows(ctx, p.Name)
		if err != nil {
			return time.Time{}, err
		}
		if n > 0 {
			return p.From, nil
		}
	}
	return limit, nil
}

// writeBulk commits the batches as history (store.Table.Backfill): one
// Iceberg commit, files sorted per month, the watermark moved to until. An
// error means nothing was committed and the batches are still to be written.
func (im *importer) writeBulk(ctx context.Context, bs []batch, until time.Time) error {
	var series []meterstore.StoredSeries
	rows := 0
	for _, b := range bs {
		series = append(series, b.series...)
		rows += b.rows
	}
	_, dups, err := im.tbl.Backfill(ctx, until, series...)
	if err != nil {
		return err
	}
	readings := im.readings(series)
	for _, b := range bs {
		im.accept(b)
	}
	im.rep.ColdRows += rows
	im.rep.BulkRows += rows
	im.rep.BulkCommits++
	im.rep.Duplicate += dups
	im.rep.Inserted += readings
	im.rep.Superseded += rows - dups - readings
	return nil
}

// readings counts the distinct readings (merge key and version scope) the
// deliveries hold: committed together, the first version of each is
// Inserted and every higher one Superseded, as if written in version order.
func (im *importer) readings(series []meterstore.StoredSeries) int {
	seen := map[string]struct{}{}
	for _, s := range series {
		p := im.readingPrefix(s)
		for _, iv := range s.Intervals {
			seen[p+iv.From.UTC().String()] = struct{}{}
		}
		for _, r := range s.Readings {
			seen[p+r.At.UTC().String()] = struct{}{}
		}
	}
	return len(seen)
}

// readingPrefix is the reading key of the delivery's rows but "from": its
// merge key and version scope.
func (im *importer) readingPrefix(s meterstore.StoredSeries) string {
	d := s.Delivery
	var k strings.Builder
	fmt.Fprintf(&k, "%s|%s|%s|", d.MaloID, d.Obis, d.Scope)
	if im.cfg.IdentifyByMelo() {
		fmt.Fprintf(&k, "%s|", d.MeloID)
	}
	for _, c := range im.cfg.IdentityColumns() {
		fmt.Fprintf(&k, "%q|", strings.ToUpper(s.Extra[c.Name]))
	}
	return k.String()
}

// writeBatch writes one batch through the routed write path. A batch the
// store refuses is reported; an error is for what stops the import.
func (im *importer) writeBatch(ctx context.Context, b batch) error {
	out, err := im.appendRetrying(ctx, b.series)
	if err != nil {
		if refusal(err) {
			im.refuse(Refusal{File: b.file, Batch: b.label, Rows: b.rows, Err: err})
			return nil
		}
		return fmt.Errorf("import %s: %s: %w", b.file, b.label, err)
	}
	im.accept(b)
	im.tally(out)
	return nil
}

// accept counts a batch that went in (or would, on a dry run): its rows, and
// those of them the import stamped with its recorded_at.
func (im *importer) accept(b batch) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.rep.Rows += b.rows
	for _, s := range b.series {
		if s.RecordedAt.Equal(im.recordedAt) {
			im.rep.Stamped += len(s.Intervals) + len(s.Readings)
		}
	}
}

// tally adds a routed write's rows and effects to the report. A row an
// archival made the write send to Iceberg as well counts cold, with the
// effect of its first write.
func (im *importer) tally(out store.AppendOutcome) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.rep.HotRows += out.HotRows - out.Rerouted
	im.rep.ColdRows += out.ColdRows
	for _, d := range out.Displacements {
		if d.Round != 1 {
			continue
		}
		switch d.Effect {
		case meterstore.Inserted:
			im.rep.Inserted++
		case meterstore.Superseded:
			im.rep.Superseded++
		case meterstore.Shadowed:
			im.rep.Shadowed++
		case meterstore.Duplicate:
			im.rep.Duplicate++
		}
	}
}

// refusal reports whether err is the store refusing a batch for what it
// holds — a rule of the data, a conflict with stored state — rather than a
// failure to reach a tier.
func refusal(err error) bool {
	for _, target := range []error{meterstore.ErrConflict, metering.ErrInvalid, meterstore.ErrInvalidRow, hot.ErrInvalidRow,
		store.ErrUnknownSubject, store.ErrSubjectErased, store.ErrWrongTimeModel} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// rowsBelow counts the batch's rows whose from lies below w.
func (b batch) rowsBelow(w time.Time) int {
	n := 0
	for _, s := range b.series {
		for _, iv := range s.Intervals {
			if iv.From.Before(w) {
				n++
			}
		}
		for _, r := range s.Readings {
			if r.At.Before(w) {
				n++
			}
		}
	}
	return n
}
