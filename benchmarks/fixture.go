package main

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/testkit"
)

// fixture is the generated workload, split the way a store that has been
// archiving daily holds it: every window but the last week in Iceberg (one
// commit per UTC day, as archival makes them), the last week still to be written.
type fixture struct {
	rows, coldRows, hotRows int
	windows                 int
	watermark               time.Time // start of the hot week
	now                     time.Time
	hot                     []meterstore.Row // the last week, in delivery order
	coldFiles               []string
	malos                   []string
	first, last             time.Time
	// cleanUntil ends the correction-free stretch at the start of the history:
	// corrections there are dropped, so its files hold one version each and the
	// elided path can be measured; later windows carry the realistic corrections.
	cleanUntil time.Time
	reference  bool // every row is also in refTable (PostgreSQL, with the primary key)
	// staleLayout says, for a fixture kept in a -fixture-dir, that its cold
	// files were laid out otherwise than this build writes them; "" if not.
	staleLayout string
}

const hotDays = 7

// settleDays is how long after a window's day rows can still arrive for it
// (corrections are restated three days later): older windows are complete.
const settleDays = 5

// refTable holds every row in PostgreSQL, with the hot table's primary key, as
// the row-store reference for storage and query comparisons.
const refTable = "ref_readings"

// loadFixture streams the workload into the tiers without holding it: a
// window's rows are kept until no more can arrive for it, then committed to
// Iceberg (and copied into the PostgreSQL reference) and dropped; only the hot
// week stays in memory, to be written by the ingest measure.
func loadFixture(ctx context.Context, e *env, w testkit.Workload, cfg meterstore.TableConfig, cleanDays int, reference bool) (*fixture, error) {
	fx := &fixture{reference: reference}
	fx.cleanUntil = w.Start.Add(time.Duration(cleanDays) * 24 * time.Hour)
	// A Berlin day starts at 22:00 or 23:00 UTC the day before, so the first
	// day's rows begin in the UTC window before Start, and the last day ends
	// before the UTC day after it (checked as rows arrive).
	fx.first = w.Start.Truncate(24 * time.Hour)
	fx.last = fx.first.Add(time.Duration(w.Days) * 24 * time.Hour)
	fx.watermark = fx.last.Add(-hotDays * 24 * time.Hour)
	fx.now = fx.last.Add(time.Hour)
	tbl, err := e.cat.CreateTable(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if reference {
		if err := createRef(ctx, e, cfg, refTable, true); err != nil {
			return nil, err
		}
	}
	malos := map[string]bool{}
	byWindow := map[time.Time][]meterstore.Row{}
	flush := func(before time.Time) error {
		var wins []time.Time
		for win := range byWindow {
			if win.Before(before) {
				wins = append(wins, win)
			}
		}
		slices.SortFunc(wins, func(a, b time.Time) int { return a.Compare(b) })
		for _, win := range wins {
			rows := byWindow[win]
			delete(byWindow, win)
			slices.SortFunc(rows, comparePK)
			if _, err := tbl.CommitWindow(ctx, &catalog.SliceSource{Rows: rows}, win.Add(24*time.Hour)); err != nil {
				return fmt.Errorf("commit window %s: %w", win.Format("2006-01-02"), err)
			}
			if reference {
				if _, err := copyRows(ctx, e, cfg, refTable, rows); err != nil {
					return err
				}
			}
			fx.coldRows += len(rows)
			fx.windows++
			if fx.windows%30 == 0 {
				logf("fixture: %d windows, %d rows in Iceberg", fx.windows, fx.coldRows)
			}
		}
		return nil
	}
	err = fx.stream(w, cfg, func(rows []meterstore.Row) error {
		for _, r := range rows {
			fx.rows++
			malos[r.MaloID] = true
			if !r.From.Before(fx.watermark) {
				fx.hot = append(fx.hot, r)
				continue
			}
			win := r.From.Truncate(24 * time.Hour)
			if win.Before(fx.first) {
				fx.first = win
			}
			byWindow[win] = append(byWindow[win], r)
		}
		if !rows[len(rows)-1].From.Before(fx.last) {
			return fmt.Errorf("fixture: a row at %s lies beyond the last window (%s)", rows[len(rows)-1].From, fx.last)
		}
		settled := rows[0].From.Truncate(24 * time.Hour).Add(-settleDays * 24 * time.Hour)
		if settled.After(fx.watermark) {
			settled = fx.watermark
		}
		return flush(settled)
	})
	if err != nil {
		return nil, err
	}
	if err := flush(fx.watermark); err != nil {
		return nil, err
	}
	fx.hotRows = len(fx.hot)
	if reference {
		if _, err := copyRows(ctx, e, cfg, refTable, fx.hot); err != nil {
			return nil, err
		}
		// Settled before anything is timed: autovacuum would otherwise
		// vacuum the freshly loaded table (tens of millions of rows at the
		// large sizes) during the measures, and an index-only scan needs the
		// visibility map a vacuum sets.
		for _, q := range []string{"VACUUM (ANALYZE) " + refTable, "CHECKPOINT"} {
			if _, err := e.pool.Exec(ctx, q); err != nil {
				return nil, fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	for m := range malos {
		fx.malos = append(fx.malos, m)
	}
	slices.Sort(fx.malos)
	files, _, err := tbl.PlanFiles(ctx, catalog.PlanRequest{})
	if err != nil {
		return nil, err
	}
	fx.coldFiles = pathsOf(files)
	return fx, nil
}

// stream encodes the workload's deliveries in their order, each as one call
// of fn, leaving out the corrections of the correction-free stretch.
func (fx *fixture) stream(w testkit.Workload, cfg meterstore.TableConfig, fn func([]meterstore.Row) error) error {
	return w.Stream(func(d testkit.Delivery) error {
		if d.Kind == testkit.Correction && d.Series.Intervals[0].From.Before(fx.cleanUntil) {
			return nil
		}
		rows, err := cfg.Encode(d.Series)
		if err != nil {
			return err
		}
		return fn(rows)
	})
}

func comparePK(a, b meterstore.Row) int {
	return cmp.Or(cmp.Compare(a.MaloID, b.MaloID), cmp.Compare(a.ObisCode, b.ObisCode), a.From.Compare(b.From), cmp.Compare(a.Version, b.Version))
}

// createRef creates a plain PostgreSQL table with the table's columns; withKey
// adds the hot tier's primary key.
func createRef(ctx context.Context, e *env, cfg meterstore.TableConfig, name string, withKey bool) error {
	var cols []string
	for _, c := range cfg.Columns() {
		null := " NOT NULL"
		if c.Nullable {
			null = ""
		}
		cols = append(cols, meterstore.QuoteIdent(c.Name)+" "+c.Type.PostgresType()+null)
	}
	if withKey {
		cols = append(cols, "PRIMARY KEY ("+meterstore.QuoteIdents(cfg.PrimaryKey())+")")
	}
	_, err := e.pool.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TABLE %s (%s)", name, name, strings.Join(cols, ", ")))
	return err
}

func numeric(v *big.Int, exp int32) pgtype.Numeric {
	return pgtype.Numeric{Int: v, Exp: exp, Valid: true}
}

func rowValues(r meterstore.Row) []any {
	vals := []any{r.MaloID, r.MeloID, r.ObisCode, r.Sparte, r.From, r.To,
		numeric(r.Value.Coefficient(), r.Value.Exponent()), r.Unit, r.Quality, r.Resolution, r.SourceKind,
		r.SourceDetail, r.Provenance, numeric(new(big.Int).SetUint64(r.Version), 0), r.VersionScope, r.RecordedAt,
		pgtype.Date{Time: r.BalancingDay, Valid: true}}
	for _, x := range r.Extra {
		vals = append(vals, x)
	}
	return vals
}

// copyRows loads rows with binary COPY and returns how long it took.
func copyRows(ctx context.Context, e *env, cfg meterstore.TableConfig, table string, rows []meterstore.Row) (time.Duration, error) {
	start := time.Now()
	i := 0
	n, err := e.pool.CopyFrom(ctx, pgx.Identifier{table}, cfg.ColumnNames(), pgx.CopyFromFunc(func() ([]any, error) {
		if i >= len(rows) {
			return nil, nil
		}
		v := rowValues(rows[i])
		i++
		return v, nil
	}))
	if err != nil {
		return 0, fmt.Errorf("copy into %s: %w", table, err)
	}
	if int(n) != len(rows) {
		return 0, fmt.Errorf("copy into %s: %d of %d rows", table, n, len(rows))
	}
	return time.Since(start), nil
}
