package engine

import (
	"context"
	"database/sql"
)

// ConfinedConn is a connection of the handle's confined database and its
// catalog, bypassing the planner: what a statement that slipped past the gate
// would reach.
func ConfinedConn(ctx context.Context, e *Engine) (*sql.Conn, string, error) {
	c, d, err := e.conn(ctx)
	if err != nil {
		return nil, "", err
	}
	return c, d.catalog, nil
}

// FedStatementsKept is the text of each fed relation kept prepared in the
// engine's database for its next run.
func FedStatementsKept(e *Engine) []string { return e.shared.fedStatements.Kept() }
