package plan

import (
	"context"
	"strings"

	"github.com/meterstore/meterstore"
)

// Feeder hands a confined statement's cold half to a database the confined
// one cannot name: the confined database opens no file, so the engine's own
// database reads the planned files — with the scope, range and ceilings in
// the reader's filter and resolution as planned — and the statement reads
// the rows through the relation Feed returns, valid until Unfeed(token).
type Feeder interface {
	Feed(ctx context.Context, cfg meterstore.TableConfig, relation string) (sql, token string)
	Unfeed(token string)
}

// coldParts is the cold half's relations as the statement reads them: as
// rendered, or — with a Feeder — one fed relation.
func (pl *planning) coldParts(ctx context.Context, cfg meterstore.TableConfig, parts []string) []string {
	f := pl.in.Feeder
	if f == nil || len(parts) == 0 {
		return parts
	}
	for i := range parts {
		parts[i] = "SELECT * FROM (" + parts[i] + ")"
	}
	sql, tok := f.Feed(ctx, cfg, strings.Join(parts, " UNION ALL "))
	pl.out.fed = append(pl.out.fed, tok)
	pl.out.feeder = f
	return []string{sql}
}
