package ingest

import (
	"fmt"
	"time"

	"github.com/meterstore/meterstore"
)

// splitAtWatermark cuts each batch with rows on both sides of the watermark
// w into two batches, each whole or nothing on its own: the rows below w
// (late corrections, one Iceberg commit) and the rows at or above it (one
// PostgreSQL transaction). No write spans the two tiers atomically — the
// routed write commits the Iceberg part first — so a batch written whole
// could be refused in PostgreSQL after its rows below w went in, stored in
// part under a refusal of all of it. Split, each half is refused or stored
// as the report says.
func (im *importer) splitAtWatermark(file string, bs []batch, w time.Time) []batch {
	out := make([]batch, 0, len(bs))
	split := 0
	for _, b := range bs {
		if w.IsZero() || !b.lo.Before(w) || b.hi.Before(w) {
			out = append(out, b)
			continue
		}
		below, above := b.cut(w)
		out = append(out, below, above)
		split++
	}
	if split > 0 {
		im.rep.Batches += split
		im.rep.Notes = append(im.rep.Notes, fmt.Sprintf(
			"%s: %d batches had rows on both sides of the watermark %s and went in as two each: the rows below it to Iceberg, the rest to PostgreSQL, each half whole or refused alone",
			file, split, w.UTC().Format(time.RFC3339)))
	}
	return out
}

// cut splits the batch at w: the rows whose from lies below w, and the rest.
func (b batch) cut(w time.Time) (below, above batch) {
	stamp := w.UTC().Format(time.RFC3339)
	below = batch{file: b.file, label: b.label + " (rows below the watermark " + stamp + ")"}
	above = batch{file: b.file, label: b.label + " (rows from the watermark " + stamp + ")"}
	for _, s := range b.series {
		lo, hi := s, s
		lo.Intervals, hi.Intervals = nil, nil
		lo.Readings, hi.Readings = nil, nil
		for _, iv := range s.Intervals {
			if iv.From.Before(w) {
				lo.Intervals = append(lo.Intervals, iv)
				below.add(iv.From)
			} else {
				hi.Intervals = append(hi.Intervals, iv)
				above.add(iv.From)
			}
		}
		for _, r := range s.Readings {
			if r.At.Before(w) {
				lo.Readings = append(lo.Readings, r)
				below.add(r.At)
			} else {
				hi.Readings = append(hi.Readings, r)
				above.add(r.At)
			}
		}
		below.series = appendNonEmpty(below.series, lo)
		above.series = appendNonEmpty(above.series, hi)
	}
	return below, above
}

func appendNonEmpty(ss []meterstore.StoredSeries, s meterstore.StoredSeries) []meterstore.StoredSeries {
	if len(s.Intervals)+len(s.Readings) == 0 {
		return ss
	}
	return append(ss, s)
}
