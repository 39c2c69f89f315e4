package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/mscons"
)

// readMSCONS reads an interchange into batches, one per message. A refused
// message is reported and the reader goes on; a syntax error ends the file,
// the messages completed before it (each checked against its UNT) kept.
func (im *importer) readMSCONS(ctx context.Context, name string, r io.Reader) ([]batch, error) {
	extra := map[string]string{}
	for col, v := range im.opt.Set {
		if !slices.ContainsFunc(im.cfg.ExtraColumns(), func(c meterstore.Column) bool { return c.Name == col }) {
			im.rep.Batches++
			im.refuse(Refusal{File: name, Err: fmt.Errorf("%w: --set %s: an MSCONS message states its own %s; --set fills declared columns (such as a tenant) only", ErrOptions, col, col)})
			return nil, nil
		}
		extra[col] = v
	}
	rd := mscons.NewReader(r, mscons.Options{Now: func() time.Time { return im.recordedAt }, MaloOf: im.opt.MaloOf, TimeZone: im.opt.TimeZone})
	var out []batch
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		var me *mscons.MessageError
		if errors.As(err, &me) {
			im.rep.Batches++
			im.refuse(Refusal{File: name, Batch: messageLabel(me.Ref, me.Document), Where: segmentOf(me), Err: err})
			continue
		}
		var se *mscons.SyntaxError
		if errors.As(err, &se) {
			im.rep.Batches++
			label := "interchange " + se.Interchange
			if se.Ref != "" {
				label = messageLabel(se.Ref, "")
			}
			im.refuse(Refusal{File: name, Batch: label, Where: fmt.Sprintf("line %d", se.Line), Err: err})
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", name, err)
		}
		im.rep.Batches++
		b := batch{file: name, label: messageLabel(m.Ref, m.Document)}
		for _, d := range m.Deliveries {
			b.series = append(b.series, meterstore.StoredSeries{Delivery: d, Extra: extra})
			for _, iv := range d.Intervals {
				b.add(iv.From)
			}
			for _, rd := range d.Readings {
				b.add(rd.At)
			}
		}
		if err := im.check(b.series); err != nil {
			im.refuse(Refusal{File: name, Batch: b.label, Rows: b.rows, Err: err})
			continue
		}
		out = append(out, b)
	}
}

func messageLabel(ref, doc string) string {
	if doc == "" {
		return fmt.Sprintf("message %s", ref)
	}
	return fmt.Sprintf("message %s (document %s)", ref, doc)
}

func segmentOf(me *mscons.MessageError) string {
	if me.Tag == "" {
		return ""
	}
	return fmt.Sprintf("segment %d %s, line %d", me.Ordinal, me.Tag, me.Line)
}
