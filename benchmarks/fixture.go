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

	"meterstore"
	"meterstore/catalog"
	"meterstore/testkit"
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
	// elided path can be measured; later windows carry the realistic 1 %.
	cleanUntil time.Time
}

// cleanDays is the length of the correction-free stretch.
const cleanDays = 30

const hotDays = 7

// refTable holds every row in PostgreSQL, with the hot table's primary key, as
// the row-store reference for storage and query comparisons.
const refTable = "ref_readings"

func loadFixture(ctx context.Context, e *env, w testkit.Workload, cfg meterstore.TableConfig) (*fixture, error) {
	byWindow := map[time.Time][]meterstore.Row{}
	fx := &fixture{}
	malos := map[string]bool{}
	var ordered []meterstore.Row
	cleanUntil := w.Start.Add(cleanDays * 24 * time.Hour)
	err := w.Stream(func(d testkit.Delivery) error {
		if d.Kind == testkit.Correction && d.Series.Intervals[0].From.Before(cleanUntil) {
			return nil
		}
		rows, err := cfg.Encode(d.Series)
		if err != nil {
			return err
		}
		for _, r := range rows {
			win := r.From.Truncate(24 * time.Hour)
			byWindow[win] = append(byWindow[win], r)
			malos[r.MaloID] = true
		}
		ordered = append(ordered, rows...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var wins []time.Time
	for k := range byWindow {
		wins = append(wins, k)
	}
	slices.SortFunc(wins, func(a, b time.Time) int { return a.Compare(b) })
	fx.first, fx.last = wins[0], wins[len(wins)-1].Add(24*time.Hour)
	fx.watermark = wins[len(wins)-hotDays]
	fx.now = fx.last.Add(time.Hour)
	fx.cleanUntil = cleanUntil
	for m := range malos {
		fx.malos = append(fx.malos, m)
	}
	slices.Sort(fx.malos)

	tbl, err := e.cat.CreateTable(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, win := range wins {
		rows := byWindow[win]
		fx.rows += len(rows)
		if !win.Before(fx.watermark) {
			continue
		}
		slices.SortFunc(rows, comparePK)
		if _, err := tbl.CommitWindow(ctx, &catalog.SliceSource{Rows: rows}, win.Add(24*time.Hour)); err != nil {
			return nil, fmt.Errorf("commit window %s: %w", win.Format("2006-01-02"), err)
		}
		fx.coldRows += len(rows)
		fx.windows++
	}
	for _, r := range ordered {
		if !r.From.Before(fx.watermark) {
			fx.hot = append(fx.hot, r)
		}
	}
	fx.hotRows = len(fx.hot)
	files, _, err := tbl.PlanFiles(ctx, catalog.PlanRequest{})
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		fx.coldFiles = append(fx.coldFiles, f.Path)
	}
	// The row-store reference: every row, with the hot table's primary key.
	if err := createRef(ctx, e, cfg, refTable, true); err != nil {
		return nil, err
	}
	all := make([]meterstore.Row, 0, fx.rows)
	for _, win := range wins {
		all = append(all, byWindow[win]...)
	}
	if _, err := copyRows(ctx, e, cfg, refTable, all); err != nil {
		return nil, err
	}
	if _, err := e.pool.Exec(ctx, "ANALYZE "+refTable); err != nil {
		return nil, err
	}
	return fx, nil
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
