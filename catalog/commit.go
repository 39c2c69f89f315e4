package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/pglock"
)

// RowSource yields pages of rows in keyset order; io.EOF at the end. Calls are
// never concurrent, but CommitWindow asks for the next page while it still
// encodes the current one, so a source that reuses page memory must keep a
// page intact until the call after next (two buffers in turn).
type RowSource interface {
	Next(ctx context.Context) ([]meterstore.Row, error)
}

// SliceSource is a RowSource over rows already in memory, in pages of PageSize (default 50 000).
type SliceSource struct {
	Rows     []meterstore.Row
	PageSize int
	pos      int
}

func (s *SliceSource) Next(ctx context.Context) ([]meterstore.Row, error) {
	if s.pos >= len(s.Rows) {
		return nil, io.EOF
	}
	n := s.PageSize
	if n <= 0 {
		n = 50_000
	}
	end := min(s.pos+n, len(s.Rows))
	page := s.Rows[s.pos:end]
	s.pos = end
	return page, nil
}

// prefetch yields src's pages, fetching each next page on its own goroutine
// while the caller works on the current one: archival then takes about as long
// as the slower of reading PostgreSQL and encoding Parquet, not their sum. It
// runs at most one page ahead (the send blocks until the caller asks), so two
// pages are in memory, and src is never called concurrently or after the loop
// ends: stopping early cancels the fetch in flight and waits for it.
func prefetch(ctx context.Context, src RowSource) iter.Seq2[[]meterstore.Row, error] {
	return func(yield func([]meterstore.Row, error) bool) {
		type fetched struct {
			page []meterstore.Row
			err  error
		}
		ctx, cancel := context.WithCancel(ctx)
		next := make(chan fetched)
		stop := make(chan struct{}) // closed when the caller's loop is over
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				page, err := src.Next(ctx)
				select {
				case next <- fetched{page, err}:
				case <-stop:
					return
				}
				if err != nil {
					return
				}
			}
		}()
		defer func() {
			close(stop)
			cancel()
			<-done
		}()
		for {
			f := <-next
			if errors.Is(f.err, io.EOF) {
				return
			}
			if !yield(f.page, f.err) || f.err != nil {
				return
			}
		}
	}
}

// CommitResult describes one archival commit.
type CommitResult struct {
	SnapshotID int64
	Rows       int64
	Files      int
	Bytes      int64
	Watermark  time.Time
}

// isCommitConflict recognises a lost compare-and-swap: iceberg-go's SQL catalog
// returns "requirement failed" unwrapped; ErrCommitFailed covers the rest.
func isCommitConflict(err error) bool {
	return err != nil && (errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed"))
}

// commit stages files (possibly none: an empty snapshot) with props on tbl and commits.
func (t *Table) commitFiles(ctx context.Context, tbl *table.Table, op string, files []iceberg.DataFile, props iceberg.Properties) (*table.Table, error) {
	tx, err := t.stageFiles(ctx, tbl, op, files, props)
	if err != nil {
		return nil, err
	}
	return t.commitTx(ctx, tx, op)
}

// stageFiles stages files (possibly none: an empty snapshot) with props on tbl.
// A table that lacks the manifest-merge properties gets them in the same
// commit, so its manifests stop growing with its history from then on.
func (t *Table) stageFiles(ctx context.Context, tbl *table.Table, op string, files []iceberg.DataFile, props iceberg.Properties) (*table.Transaction, error) {
	tx := tbl.NewTransaction()
	var err error
	if missing := missingMergeProperties(tbl); len(missing) > 0 {
		if err := tx.SetProperties(missing); err != nil {
			return nil, fmt.Errorf("cold table %s: stage %s: manifest merging: %w", t.cfg.Name(), op, err)
		}
	}
	if len(files) == 0 {
		err = tx.AddFiles(ctx, nil, props, false)
	} else {
		err = tx.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck())
	}
	if err != nil {
		return nil, fmt.Errorf("cold table %s: stage %s: %w", t.cfg.Name(), op, err)
	}
	return tx, nil
}

// commitUnderLease commits what stage stages on the table under the
// cold-append lease, which serialises MeterStore's cold commits (archival,
// cold appends, compaction). A commit lost anyway — to a writer the lease does
// not reach — is staged again on the reloaded table, a bounded number of
// times; stage re-checks whatever the commit rests on.
func (t *Table) commitUnderLease(ctx context.Context, op string, stage func(tbl *table.Table) (*table.Transaction, error)) (*table.Table, error) {
	if t.c.opt.Pool != nil {
		lease, err := pglock.Acquire(ctx, t.c.opt.Pool, LeaseName(t.cfg.Name()), ColdAppendLeaseWait)
		if err != nil {
			return nil, fmt.Errorf("cold table %s: %s: %w", t.cfg.Name(), op, err)
		}
		defer lease.Release()
	}
	var lastErr error
	for attempt := 0; attempt < coldAppendAttempts; attempt++ {
		if attempt > 0 {
			if err := t.Refresh(ctx); err != nil {
				return nil, err
			}
		}
		tx, err := stage(t.Iceberg())
		if err != nil {
			return nil, err
		}
		nt, err := t.commitTx(ctx, tx, op)
		if !errors.Is(err, ErrCommitConflict) {
			return nt, err
		}
		lastErr = err
	}
	return nil, fmt.Errorf("cold table %s: %s gave up after %d attempts: %w", t.cfg.Name(), op, coldAppendAttempts, lastErr)
}

func (t *Table) commitTx(ctx context.Context, tx *table.Transaction, op string) (*table.Table, error) {
	if h := t.c.opt.BeforeCommit; h != nil {
		if err := h(ctx, t.cfg.Name(), op); err != nil {
			return nil, fmt.Errorf("cold table %s: %s: %w", t.cfg.Name(), op, err)
		}
	}
	nt, err := tx.Commit(ctx)
	if err != nil {
		if isCommitConflict(err) {
			return nil, fmt.Errorf("cold table %s: %s: %w: %v", t.cfg.Name(), op, ErrCommitConflict, err)
		}
		return nil, fmt.Errorf("cold table %s: %s: commit: %w", t.cfg.Name(), op, err)
	}
	t.set(t.reloaded(ctx, nt))
	return nt, nil
}

// reloaded is the table as the catalog now has it, read back from its
// metadata file, or committed itself if that read fails. The table iceberg-go
// returns from a commit keeps the metadata it was built on reachable, and
// that its own: a handle holding each commit's result would hold every
// version of the table's metadata, each naming every snapshot before it —
// memory growing with the square of the commits of a long daily archival.
func (t *Table) reloaded(ctx context.Context, committed *table.Table) *table.Table {
	tbl, err := t.c.cat.LoadTable(ctx, t.ident)
	if err != nil {
		return committed
	}
	return tbl
}

// CommitWindow is CommitFenced under a fence read from the table as the
// catalog has it now (the handle refreshed), with no lease: for a caller that
// is the table's only archiver.
func (t *Table) CommitWindow(ctx context.Context, src RowSource, newWatermark time.Time) (CommitResult, error) {
	if err := t.Refresh(ctx); err != nil {
		return CommitResult{}, err
	}
	f, err := t.Fence(ctx, nil)
	if err != nil {
		return CommitResult{}, err
	}
	return t.CommitFenced(ctx, f, src, newWatermark)
}

// CommitFenced writes every row src yields and the new watermark in ONE
// Iceberg commit (one snapshot): both become durable or neither. The next page
// is fetched while the current one is encoded (prefetch), so memory holds two
// pages and the writer's bounded state (writeFiles), whatever the window. A
// watermark lower than the fence's is refused with ErrWatermarkBackwards; a
// window with no rows still commits (an empty snapshot) so the watermark
// advances. The commit lands only if the fence holds (ErrFenced otherwise):
// no snapshot since the fence's set the watermark and its lease is still held
// — checked before the files are written and again, under the cold-append
// lease, right before the commit.
//
// Rows are written in files per (partition, version), at most
// MaxVersionFilesPerPartition versions apart per partition, a new file every
// maxRowGroupsPerFile row groups: versions are per balancing day, so a UTC-day
// window's files each hold one version and the versions cover disjoint "from"
// ranges — what lets the engine skip version resolution on them.
func (t *Table) CommitFenced(ctx context.Context, f Fence, src RowSource, newWatermark time.Time) (_ CommitResult, err error) {
	return t.commitFenced(ctx, f, "archive", src, newWatermark, nil)
}

// commitFenced is CommitFenced for op. With reaching set — the rows written
// whose intervals reach above newWatermark, known once src is drained — the
// commit runs under the hot tier's hold on their readings (HoldAgainstHot).
func (t *Table) commitFenced(ctx context.Context, f Fence, op string, src RowSource, newWatermark time.Time, reaching func() []meterstore.Row) (_ CommitResult, err error) {
	defer t.explainObjectStore(&err)
	newWatermark = newWatermark.UTC()
	if newWatermark.Before(f.Watermark) {
		return CommitResult{}, fmt.Errorf("cold table %s: watermark %s is before the current %s: %w",
			t.cfg.Name(), formatWatermark(newWatermark), formatWatermark(f.Watermark), ErrWatermarkBackwards)
	}
	tbl := t.Iceberg()
	if err := t.checkFence(ctx, tbl, f); err != nil {
		return CommitResult{}, err
	}
	var rows int64
	var srcErr error
	pages := func(yield func([]meterstore.Row, error) bool) {
		for page, err := range prefetch(ctx, src) {
			if err != nil {
				srcErr = err
				yield(nil, err)
				return
			}
			for i := range page {
				if !page[i].From.Before(newWatermark) {
					err := fmt.Errorf("malo %s %s at %s is not below the new watermark %s: %w", page[i].MaloID, page[i].ObisCode,
						formatWatermark(page[i].From), formatWatermark(newWatermark), ErrAboveWatermark)
					srcErr = err
					yield(nil, err)
					return
				}
			}
			rows += int64(len(page))
			if !yield(page, nil) {
				return
			}
		}
	}
	files, err := t.writeFiles(ctx, tbl, pages, defaultBounds)
	if err != nil {
		if srcErr != nil {
			return CommitResult{}, fmt.Errorf("cold table %s: row source: %w", t.cfg.Name(), srcErr)
		}
		return CommitResult{}, err
	}
	props := iceberg.Properties{WatermarkProperty: formatWatermark(newWatermark), WatermarkCommitProperty: f.commitMark(op)}
	var nt *table.Table
	commit := func(ctx context.Context) (err error) {
		nt, err = t.commitUnderLease(ctx, op, func(tbl *table.Table) (*table.Transaction, error) {
			if err := t.checkFence(ctx, tbl, f); err != nil {
				return nil, err
			}
			return t.stageFiles(ctx, tbl, op, files, props)
		})
		return err
	}
	if reaching != nil {
		err = t.underHotHold(ctx, reaching(), newWatermark, commit)
	} else {
		err = commit(ctx)
	}
	if err != nil {
		return CommitResult{}, err
	}
	res := CommitResult{Rows: rows, Files: len(files), Watermark: newWatermark}
	if s := nt.CurrentSnapshot(); s != nil {
		res.SnapshotID = s.SnapshotID
	}
	for _, f := range files {
		res.Bytes += f.FileSizeBytes()
	}
	return res, nil
}
