package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/meterstore/meterstore"
)

// hotHalfSplit measures the hot half of a whole-table question on its own,
// and whether resolving it in PostgreSQL would make it cheaper: the hot
// window's rows summed through readings (streamed by the engine's hot scan,
// resolved by DuckDB) next to PostgreSQL summing them as stored, resolved by
// DISTINCT ON the resolution key (the newest version first), and resolved by
// NOT EXISTS a higher version of the key; and PostgreSQL sending the rows to
// the client as stored and resolved. The halves are independent: both split
// at the watermark on "from", a merge-key column.
func (b *bench) hotHalfSplit() (string, error) {
	w := b.fx.watermark
	key := meterstore.QuoteIdents(b.cfg.ResolutionKey())
	table := meterstore.QuoteIdent(b.cfg.Name())
	cols := `malo_id, obis_code, "from", value, version, version_scope, balancing_day`
	stored := fmt.Sprintf(`SELECT %s FROM %s WHERE "from" >= $1`, cols, table)
	resolved := fmt.Sprintf(`SELECT DISTINCT ON (%s) %s FROM %s WHERE "from" >= $1 ORDER BY %s, version DESC`, key, cols, table, key)
	newer := make([]string, 0, len(b.cfg.ResolutionKey())+1)
	for _, k := range b.cfg.ResolutionKey() {
		q := meterstore.QuoteIdent(k)
		newer = append(newer, fmt.Sprintf("n.%s = s.%s", q, q))
	}
	newer = append(newer, "n.version > s.version")
	unsuperseded := fmt.Sprintf(`SELECT %s FROM %s AS s WHERE "from" >= $1 AND NOT EXISTS (SELECT 1 FROM %s AS n WHERE %s)`,
		cols, table, table, strings.Join(newer, " AND "))
	sum := func(rel string) string { return fmt.Sprintf(`SELECT count(*), sum(value) FROM (%s) AS hot`, rel) }
	var nStored, nCurrent int64
	if err := b.e.pool.QueryRow(b.ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM (%s) s), (SELECT count(*) FROM (%s) r)`, stored, resolved), w).Scan(&nStored, &nCurrent); err != nil {
		return "", fmt.Errorf("hot half: count: %w", err)
	}
	sides := []struct {
		name string
		run  func() (time.Duration, error)
	}{
		{"readings, count and sum of the hot window", func() (time.Duration, error) {
			return b.runEngine(`SELECT count(*), sum(value) FROM readings WHERE "from" >= $1`, w)
		}},
		{"PostgreSQL, count and sum as stored", func() (time.Duration, error) { return b.runPG(sum(stored), w) }},
		{"PostgreSQL, count and sum resolved by DISTINCT ON", func() (time.Duration, error) { return b.runPG(sum(resolved), w) }},
		{"PostgreSQL, count and sum resolved by NOT EXISTS a higher version", func() (time.Duration, error) { return b.runPG(sum(unsuperseded), w) }},
		{"PostgreSQL, the rows to the client as stored", func() (time.Duration, error) { return b.runPG(stored, w) }},
		{"PostgreSQL, the rows to the client resolved by DISTINCT ON", func() (time.Duration, error) { return b.runPG(resolved, w) }},
	}
	times := make([][]time.Duration, len(sides))
	for i := -1; i < b.o.reps; i++ {
		for j, s := range sides {
			d, err := s.run()
			if err != nil {
				return "", fmt.Errorf("hot half: %s: %w", s.name, err)
			}
			if i >= 0 {
				times[j] = append(times[j], d)
			}
		}
	}
	parts := make([]string, len(sides))
	for j, s := range sides {
		parts[j] = fmt.Sprintf("%s %s", s.name, median(times[j]).Round(100*time.Microsecond))
	}
	return fmt.Sprintf("hot half (from ≥ %s): %d stored rows, %d current; %s (medians of %d, alternating)",
		w.UTC().Format(time.RFC3339), nStored, nCurrent, strings.Join(parts, "; "), b.o.reps), nil
}
