package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/meterstore/meterstore/hot"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/metering"
)

// earlyWriter writes the batches of a file to PostgreSQL while the file is
// still being read. A batch of a CSV or Parquet file is complete only once
// every row of its channel has been read, and that is known only at the
// file's end — unless the rows of each channel are counted first: a query
// over the file (one scan of two columns) counts them per spelling of the
// channel (the malo_id and obis_code text), summed per channel as the parser
// reads it (channelOf; a row read is keyed by its parse, rowChannel), so a
// channel's batches are complete the moment its last row is read, and they
// are written then, chunkRows at a time in hotWriters transactions at once,
// while the read goes on. The transactions at once are of different lanes
// (laneOf): the channels of a lane hold advisory-lock buckets no other lane
// holds, so they never wait for each other's locks — two writes of a hundred
// channels each drawn in file order almost always share a bucket, and the
// second then waited for the first to commit, one COPY after the other. Each
// batch is still written whole or not at all,
// as writeGroupOrEach writes it, and the rows held are those of the channels
// not yet complete and of the writes in flight, not the file's.
//
// Only batches the routed write would put wholly into PostgreSQL are written
// early: their first "from" at or above the watermark and the bulk history
// path's limit, both as the read began, so nothing written early changes
// where the rest of the file goes. A channel any batch of which is not such a
// batch is left whole to the write after the read.
type earlyWriter struct {
	im       *importer
	ctx      context.Context
	file     string
	w, limit time.Time
	// chunkRows are the rows of complete batches gathered before a write
	// begins (chunkRows).
	chunkRows int
	// channels are the rows left to read of each channel (channelOf).
	channels map[channelKey]*channelRows
	// maloInFile, obisInFile: the channel's columns the file holds (a
	// column filled by --set is the same for every row).
	maloInFile, obisInFile bool

	lanes    [hotWriters]lane
	launched map[string]bool // channels (malo_id|obis_code) of writes begun
	// held bounds the chunks handed to writers and not yet written, so
	// the rows held stay a few chunks' whatever the file's size.
	held chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
	// handed counts the batches and rows given to writers.
	handedBatches, handedRows int
}

// channelKey is a channel as the parser reads it: the MaLo and OBIS code
// where they parse, so that two spellings of one channel (" 41373559241",
// "1-0:01.29.0") are the one channel the batches hold — its batches complete
// at its last row in either spelling, and in file order. Text that does not
// parse is kept as it is: the row is refused, and the count and the read key
// it alike.
type channelKey struct {
	malo               metering.MaloID
	obis               metering.ObisCode
	maloText, obisText string
}

// channelOf is the channel of malo_id and obis_code text as the count reads
// them.
func channelOf(malo, obis string) channelKey {
	var k channelKey
	var err error
	if k.malo, err = metering.ParseMaloID(malo); err != nil {
		k.maloText = malo
	}
	if k.obis, err = metering.ParseObis(obis); err != nil {
		k.obisText = obis
	}
	return k
}

// rowChannel is the channel of the row just read: of a row that parsed, its
// MaLo and OBIS code as parsed (what channelOf makes of the same text, read
// once); of one that did not, channelOf its text. A column the file does not
// hold is no part of the key, as in the count.
func (ew *earlyWriter) rowChannel(rec record, p parsed, ok bool) channelKey {
	if !ok {
		var malo, obis string
		if ew.maloInFile {
			malo = rec["malo_id"]
		}
		if ew.obisInFile {
			obis = rec["obis_code"]
		}
		return channelOf(malo, obis)
	}
	var k channelKey
	if ew.maloInFile {
		k.malo = p.delivery.MaloID
	}
	if ew.obisInFile {
		k.obis = p.delivery.Obis
	}
	return k
}

// lane is the chunk of complete batches gathering for one writer, and that
// writer: one transaction of a lane at a time.
type lane struct {
	chunk []batch
	rows  int
	busy  chan struct{}
}

// laneOf is the lane of a batch: its first channel's advisory-lock bucket
// modulo hotWriters (hot.LockBucket), so the lanes' writes hold disjoint
// buckets. A batch of a CSV or Parquet file is one channel's; an MSCONS
// message of several channels may hold buckets of the other lane too, and
// its write then waits for that lane's writes of them, or they for it — a
// cost in time only: every write takes its buckets in ascending order, so
// none deadlocks, and a channel is in one lane's batches only (splitLanes).
func laneOf(b batch) int {
	if len(b.series) == 0 {
		return 0
	}
	s := b.series[0]
	return hot.LockBucket(s.MaloID.String(), s.Obis.String()) % hotWriters
}

// channelRows is a channel's rows not yet read and the batches they fill.
type channelRows struct {
	left   int
	groups []*readGroup
}

// onEarlyWrite, when set, is told the rows read so far each time the early
// writer begins a write.
var onEarlyWrite func(rowsRead int)

// startEarlyWrites counts the rows of each channel of the file src and
// returns the writer of its complete batches, or nil when nothing is to be
// written early: a dry run, batches of earlier files still queued (they go
// first, in file order), no channel column in the file, or a count that
// failed (the read itself then says why).
func (im *importer) startEarlyWrites(ctx context.Context, name, src string, cols []srcColumn) (*earlyWriter, error) {
	if im.opt.DryRun || len(im.pending) > 0 {
		return nil, nil
	}
	ew := &earlyWriter{im: im, ctx: ctx, file: name,
		channels: map[channelKey]*channelRows{}, launched: map[string]bool{}, held: make(chan struct{}, 2*hotWriters)}
	for i := range ew.lanes {
		ew.lanes[i].busy = make(chan struct{}, 1)
	}
	key := []string{"''", "''"}
	for _, c := range cols {
		switch c.target {
		case "malo_id":
			key[0], ew.maloInFile = "coalesce(CAST("+sqltext.Ident(c.name)+" AS VARCHAR), '')", true
		case "obis_code":
			key[1], ew.obisInFile = "coalesce(CAST("+sqltext.Ident(c.name)+" AS VARCHAR), '')", true
		}
	}
	if !ew.maloInFile && !ew.obisInFile {
		return nil, nil
	}
	var err error
	if ew.w, err = im.tbl.Watermark(ctx); err != nil {
		return nil, fmt.Errorf("import %s: %w", name, err)
	}
	if ew.limit, err = im.bulkLimit(ctx); err != nil {
		return nil, fmt.Errorf("import %s: %w", name, err)
	}
	rows, err := im.db.QueryContext(ctx, "SELECT "+key[0]+", "+key[1]+", count(*) FROM "+src+" GROUP BY ALL")
	if err != nil {
		return nil, nil
	}
	defer rows.Close()
	fileRows := 0
	for rows.Next() {
		var malo, obis string
		var n int
		if err := rows.Scan(&malo, &obis, &n); err != nil {
			return nil, nil
		}
		fileRows += n
		k := channelOf(malo, obis)
		if ew.channels[k] == nil {
			ew.channels[k] = &channelRows{}
		}
		ew.channels[k].left += n
	}
	if rows.Err() != nil {
		return nil, nil
	}
	ew.chunkRows = chunkRows(fileRows, im.tbl.HotBatchRows())
	return ew, nil
}

// chunkRows is how many rows of complete batches a lane of the early writer
// gathers before it begins a write: a hot transaction's (hotLimit,
// HotBatchRows) — but of a file of fewer than 4×hotWriters such
// transactions, a 4×hotWriters-th of its rows: each lane gets about a
// hotWriters-th of the file and writes it in about four chunks, so that
// PostgreSQL is busy early in the read and the writes begun once the read
// ends are small ones. With whole transactions, a file of under two holds
// its second half until the read ends, and that half's write begins only
// then. Chunks complete while their writers are busy wait, up to
// 2×hotWriters chunks in all (held), and then the read waits with them:
// PostgreSQL is busy on both.
func chunkRows(fileRows, hotLimit int) int {
	parts := 4 * hotWriters
	return max(1, min(hotLimit, (fileRows+parts-1)/parts))
}

// errFileChanged: the read met more rows of a channel than the count.
var errFileChanged = errors.New("the file changed while it was read: a channel holds more rows than counted before; import it again")

// channel is the counted channel of the row just read (rowChannel); it
// tracks g, the batch the row went to, as one the channel fills.
func (ew *earlyWriter) channel(rec record, p parsed, ok bool, g *readGroup) (*channelRows, error) {
	if ew == nil {
		return nil, nil
	}
	ch := ew.channels[ew.rowChannel(rec, p, ok)]
	if ch == nil || ch.left == 0 {
		return nil, errFileChanged
	}
	if !containsGroup(ch.groups, g) {
		ch.groups = append(ch.groups, g)
		g.open++
	}
	return ch, nil
}

func containsGroup(gs []*readGroup, g *readGroup) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

// rowRead counts a row of ch read; once its last is, the channel's batches
// that are complete and all for PostgreSQL are written.
func (ew *earlyWriter) rowRead(ch *channelRows, rowsRead int) error {
	if ch == nil {
		return nil
	}
	ch.left--
	if ch.left > 0 {
		return nil
	}
	for _, g := range ch.groups {
		g.open--
	}
	for _, g := range ch.groups {
		if g.open > 0 || (g.accepted(ew.im) && !ew.hot(g.batch)) {
			return nil
		}
	}
	for _, g := range ch.groups {
		if g.accepted(ew.im) && !g.early {
			g.early = true
			l := &ew.lanes[laneOf(g.batch)]
			l.chunk = append(l.chunk, g.batch)
			l.rows += g.rows
		}
	}
	for i := range ew.lanes {
		if ew.lanes[i].rows >= ew.chunkRows {
			if err := ew.launch(i, rowsRead); err != nil {
				return err
			}
		}
	}
	return nil
}

// hot reports whether the routed write puts all of b into PostgreSQL and the
// bulk history path would not take it.
func (ew *earlyWriter) hot(b batch) bool {
	return !b.lo.Before(ew.w) && !b.lo.Before(ew.limit)
}

// launch hands lane i's chunk of complete batches to its writer, which
// writes it once the lane's previous write is done; the read waits while
// the writers hold as many chunks as held does. A chunk holding a channel
// an earlier write holds waits for every earlier write: which delivery of a
// channel wins must not depend on timing.
func (ew *earlyWriter) launch(i int, rowsRead int) error {
	l := &ew.lanes[i]
	if len(l.chunk) == 0 {
		return nil
	}
	if err := ew.failed(); err != nil {
		return err
	}
	chunk := l.chunk
	l.chunk, l.rows = nil, 0
	keys := map[string]bool{}
	shared := false
	for _, b := range chunk {
		for _, s := range b.series {
			k := seriesChannel(s)
			keys[k] = true
			shared = shared || ew.launched[k]
		}
		ew.handedBatches++
		ew.handedRows += b.rows
	}
	if shared {
		ew.wg.Wait()
	}
	for k := range keys {
		ew.launched[k] = true
	}
	if onEarlyWrite != nil {
		onEarlyWrite(rowsRead)
	}
	select {
	case ew.held <- struct{}{}:
	case <-ew.ctx.Done():
		return ew.ctx.Err()
	}
	ew.wg.Add(1)
	go func() {
		defer ew.wg.Done()
		defer func() { <-ew.held }()
		select {
		case l.busy <- struct{}{}:
		case <-ew.ctx.Done():
			ew.fail(ew.ctx.Err())
			return
		}
		defer func() { <-l.busy }()
		if err := ew.im.writeGroupOrEach(ew.ctx, ew.file, chunk); err != nil {
			ew.fail(err)
		}
	}()
	return nil
}

func (ew *earlyWriter) fail(err error) {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.err = errors.Join(ew.err, err)
}

func (ew *earlyWriter) failed() error {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	return ew.err
}

// finish writes what is left of the chunk and waits for every write; the
// error is one that stops the import (a tier that cannot be reached).
func (ew *earlyWriter) finish(rowsRead int) error {
	if ew == nil {
		return nil
	}
	var err error
	for i := range ew.lanes {
		if err = ew.launch(i, rowsRead); err != nil {
			break
		}
	}
	ew.wg.Wait()
	return errors.Join(err, ew.failed())
}

// written is how a refusal of the rest of a file says what of it was
// written before: the batches complete before the row it stopped at.
func (ew *earlyWriter) written() string {
	if ew == nil || ew.handedBatches == 0 {
		return ""
	}
	return fmt.Sprintf("; the %d batches (%d rows) complete before that row were written before it was met (the report counts each)",
		ew.handedBatches, ew.handedRows)
}

// readGroup is a batch being read: its deliveries by key, the first refusal
// of a row of it, and how many of its channels are still being read.
type readGroup struct {
	batch
	refusal *Refusal
	index   map[string]int // delivery key → position in series
	open    int
	// checkErr is the encoding check's (checked once it is done).
	checked  bool
	checkErr error
	early    bool
}

// accepted reports whether the batch breaks no rule the read checks: no row
// of it refused, its deliveries encoded as the write path will encode them.
func (g *readGroup) accepted(im *importer) bool {
	if g.refusal != nil {
		return false
	}
	if !g.checked {
		g.checkErr, g.checked = im.check(g.series), true
	}
	return g.checkErr == nil
}
