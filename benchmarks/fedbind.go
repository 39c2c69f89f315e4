package main

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine/plan"
)

// fedBind: one meter's month of cold files read as a served statement's fed
// relation reads them (plan.FilesRelation, prepared and run anew: DuckDB
// keeps no prepared read_parquet across runs), with the files whose footers
// prove their names are their field ids read by name, against the same
// files all read through read_parquet's field-id schema — alternating, on
// one connection of the store's engine database. Bind is the prepare alone.
func (b *bench) fedBind() ([]result, error) {
	w := b.fx.watermark
	lo := time.Date(w.Year(), w.Month()-1, 1, 0, 0, 0, 0, time.UTC)
	hi := lo.AddDate(0, 1, 0)
	conn, err := b.st.Engine().DB().Conn(b.ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var byName, byID, bindName, bindID []time.Duration
	files, named := 0, 0
	for rep := 0; rep < b.o.reps; rep++ {
		for _, m := range b.fx.malos[:min(20, len(b.fx.malos))] {
			marked, err := b.meterMonthFiles(m, lo, hi)
			if err != nil {
				return nil, err
			}
			asByID := make([]plan.ColdFile, len(marked))
			for i, f := range marked {
				f.NamesAsIDs = false
				asByID[i] = f
				if marked[i].NamesAsIDs {
					named++
				}
			}
			files += len(marked)
			qName, err := b.meterMonthQuery(marked, m, lo, hi)
			if err != nil {
				return nil, err
			}
			qID, err := b.meterMonthQuery(asByID, m, lo, hi)
			if err != nil {
				return nil, err
			}
			type side struct {
				q          string
				runs, bind *[]time.Duration
			}
			sides := []side{{qName, &byName, &bindName}, {qID, &byID, &bindID}}
			if len(byName)%2 == 1 {
				sides[0], sides[1] = sides[1], sides[0] // neither side always runs first
			}
			for _, side := range sides {
				run, bind, err := prepareAndRun(b, conn, side.q)
				if err != nil {
					return nil, err
				}
				*side.runs, *side.bind = append(*side.runs, run), append(*side.bind, bind)
			}
		}
	}
	us := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	rn, ri, bn, bi := median(byName), median(byID), median(bindName), median(bindID)
	return []result{{measure: "fed relation, one meter's month: prepare + run, by name / by field id (p50)",
		against: "the same files all read through read_parquet's field-id schema, alternating", target: "< 1.0×",
		figure: fmt.Sprintf("%.2f× (%s / %s); bind alone %.2f× (%s / %s); %d of %d files named as their ids; %d samples each; load %s",
			float64(rn)/float64(ri), us(rn), us(ri), float64(bn)/float64(bi), us(bn), us(bi), named, files, len(byName), loadAverage()),
		met: rn < ri}}, nil
}

// meterMonthFiles are the cold files of meter m in [lo, hi) as planning
// knows them, with the marks a fed relation reads them by.
func (b *bench) meterMonthFiles(m string, lo, hi time.Time) ([]plan.ColdFile, error) {
	fs, _, err := b.table().Cold().PlanFiles(b.ctx, catalog.PlanRequest{From: lo, To: hi, Eq: map[string]string{"malo_id": m}})
	if err != nil {
		return nil, err
	}
	out := make([]plan.ColdFile, 0, len(fs))
	for _, f := range fs {
		if !f.Superseded {
			out = append(out, plan.ColdFile{Path: f.Path, FieldIDs: f.FieldIDs, NamesAsIDs: f.NamesAsIDs, BalancingDay: f.BalancingDay})
		}
	}
	return out, nil
}

// meterMonthQuery reads meter m's rows in [lo, hi) from files with DuckDB's
// reader, as a fed relation reads them.
func (b *bench) meterMonthQuery(files []plan.ColdFile, m string, lo, hi time.Time) (string, error) {
	rel, err := plan.FilesRelation(b.ctx, &plan.Table{Config: b.cfg}, false, nil, files, hi)
	return fmt.Sprintf(`SELECT "from", "value" FROM (%s) WHERE malo_id = '%s' AND "from" >= TIMESTAMPTZ '%s'`, rel, m, lo.Format(time.RFC3339)), err
}

// prepareAndRun prepares q on conn (bind: the prepare alone), then runs it
// and reads every row (run: prepare, run and rows).
func prepareAndRun(b *bench, conn *sql.Conn, q string) (run, bind time.Duration, err error) {
	start := time.Now()
	st, err := conn.PrepareContext(b.ctx, q)
	if err != nil {
		return 0, 0, fmt.Errorf("prepare %s: %w", q, err)
	}
	defer st.Close()
	bind = time.Since(start)
	rows, err := st.QueryContext(b.ctx)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return time.Since(start), bind, rows.Err()
}
