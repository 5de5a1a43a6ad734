package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Identity is who a Postgres event store is: an id of its own, made the
// first time it is asked for, and where its log came from when it was
// imported.
type Identity struct {
	ID uuid.UUID
	// ImportedFrom is the store an imported log was exported from (nil
	// when the log was written here).
	ImportedFrom *uuid.UUID
	ImportedAt   *time.Time
	// Partial holds the filters of the partial export the log was imported
	// from (with --partial); nil for a whole log. Such a store is an
	// analysis copy: its streams lack events, so it must not be served.
	Partial json.RawMessage
}

// ErrPartialStore is the error of serving a store imported from a partial
// export.
var ErrPartialStore = errors.New("the event store holds a partial log (imported with feedsvc events import --partial, for analysis): it cannot be served; import a whole export (no --type, --stream-prefix, --org, --since, --until or --from-position) into a new database")

// Identity returns the store's identity, making its id on first use.
func (s *Postgres) Identity(ctx context.Context) (Identity, error) {
	return identity(ctx, s.pool)
}

// CheckServable returns ErrPartialStore, with the filters, when the store
// holds a partial log.
func (s *Postgres) CheckServable(ctx context.Context) error {
	var partial []byte
	err := s.pool.QueryRow(ctx, "SELECT partial FROM event_store").Scan(&partial)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && partial == nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the event store's identity: %w", err)
	}
	return fmt.Errorf("%w (the export's filters: %s)", ErrPartialStore, partial)
}

func identity(ctx context.Context, db interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (Identity, error) {
	var id Identity
	// The insert does nothing once the row exists; the select then reads it
	// (a statement's own insert is not visible to its select, hence the
	// UNION).
	err := db.QueryRow(ctx, `WITH made AS (
			INSERT INTO event_store (id) VALUES (gen_random_uuid()) ON CONFLICT (one) DO NOTHING
			RETURNING id, imported_from, imported_at, partial)
		SELECT id, imported_from, imported_at, partial FROM made
		UNION ALL SELECT id, imported_from, imported_at, partial FROM event_store
		LIMIT 1`).Scan(&id.ID, &id.ImportedFrom, &id.ImportedAt, &id.Partial)
	if errors.Is(err, pgx.ErrNoRows) {
		// Another session made the row after this statement's snapshot.
		err = db.QueryRow(ctx, "SELECT id, imported_from, imported_at, partial FROM event_store").
			Scan(&id.ID, &id.ImportedFrom, &id.ImportedAt, &id.Partial)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("read the event store's identity: %w", err)
	}
	return id, nil
}
