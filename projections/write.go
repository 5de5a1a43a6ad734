package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
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

// ExecArraysUnlessConflict runs insert, a statement of ExecArrays whose
// rows are usually all new, and when one of them is not (a unique
// violation) runs skipping instead: the same statement with ON CONFLICT DO
// NOTHING, which gives the same rows when nothing conflicts. Postgres
// inserts a row ~20-25% cheaper without ON CONFLICT (it need not insert
// speculatively and check each unique index twice), and a rebuild or a
// catch-up inserts rows that are all new. In a batch's transaction the
// attempt runs in a savepoint, so that its failure leaves the batch
// intact; outside one (a direct call), skipping runs at once.
func ExecArraysUnlessConflict(ctx context.Context, db bun.IDB, insert, skipping string, args ...any) error {
	tx, ok := db.(bun.Tx)
	if !ok {
		return ExecArrays(ctx, db, skipping, args...)
	}
	if _, err := tx.ExecContext(ctx, "SAVEPOINT unless_conflict"); err != nil {
		return Exec(nil, err)
	}
	err := ExecArrays(ctx, db, insert, args...)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		_, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT unless_conflict")
		return Exec(nil, err)
	case errors.As(err, &pgErr) && pgErr.Code == "23505": // unique_violation
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT unless_conflict"); err != nil {
			return Exec(nil, err)
		}
		if err := ExecArrays(ctx, db, skipping, args...); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT unless_conflict")
		return Exec(nil, err)
	}
	return err
}
