package projections

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Exec turns the result of a read-model write into its error, with
// context: handlers write `return projections.Exec(db.NewInsert()…Exec(ctx))`.
func Exec(_ any, err error) error {
	if err != nil {
		return fmt.Errorf("write read model: %w", err)
	}
	return nil
}

// MaxRowsPerInsert bounds the rows one statement of a deferred batch
// write carries (see Deferred).
const MaxRowsPerInsert = 1000

// ExecArrays runs a statement whose parameters are arrays ($1, $2, …)
// straight through database/sql, so pgx encodes them itself, on a
// statement the connection prepares once, rather than bun formatting them
// into SQL text that Postgres would parse anew for every batch.
func ExecArrays(ctx context.Context, db bun.IDB, query string, args ...any) error {
	var err error
	switch conn := db.(type) {
	case bun.Tx:
		_, err = conn.Tx.ExecContext(ctx, query, args...)
	case *bun.DB:
		_, err = conn.DB.ExecContext(ctx, query, args...)
	case bun.Conn:
		_, err = conn.Conn.ExecContext(ctx, query, args...)
	default:
		return fmt.Errorf("write read model: unsupported connection %T", db)
	}
	return Exec(nil, err)
}

// Before returns handlers that run before ahead of each of hs, in the same
// transaction: the webhook dispatcher queues what it deferred under the
// subscriptions as they stood before a change to them.
func Before(before func(ctx context.Context, db bun.IDB) error, hs []Handler) []Handler {
	out := make([]Handler, len(hs))
	for i, h := range hs {
		project := h.project
		out[i] = Handler{eventTypes: h.eventTypes, project: func(ctx context.Context, db bun.IDB, env Envelope) error {
			if err := before(ctx, db); err != nil {
				return err
			}
			return project(ctx, db, env)
		}}
	}
	return out
}
