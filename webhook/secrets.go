package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Secrets keeps webhook signing secrets.
//
// A secret must be readable to sign with (HMAC needs the key itself), so
// it cannot be stored hashed like an API key. It is kept out of the event
// log, which is immutable and copied around (rebuilds, backups, debugging):
// events name a secret by id, and the secret lives in webhook_secrets,
// where a rotated-out or deleted webhook's secret is actually removed
// (Housekeep). Secrets are never logged and never returned after the
// answer that created them.
type Secrets struct {
	db bun.IDB
}

// NewSecrets returns the secret store over db.
func NewSecrets(db bun.IDB) *Secrets { return &Secrets{db: db} }

type secretRow struct {
	bun.BaseModel `bun:"table:webhook_secrets"`

	ID             uuid.UUID `bun:"id,pk,type:uuid"`
	OrganizationID uuid.UUID `bun:"organization_id,type:uuid"`
	Secret         string    `bun:"secret"`
	CreatedAt      time.Time `bun:"created_at"`
}

// Create stores a fresh secret for org under id and returns id and the
// secret. In an idempotent request (a webhook create or a rotation with an
// Idempotency-Key) id is the request's (idempotency.Scope.NewID), and a
// rerun of the request gets the secret its first run stored: the one the
// webhook's events name. Elsewhere id is fresh.
func (s *Secrets) Create(ctx context.Context, org, id uuid.UUID) (uuid.UUID, string, error) {
	row := secretRow{ID: id, OrganizationID: org, Secret: NewSecret(), CreatedAt: time.Now().UTC()}
	// The no-op update makes the upsert return the stored row when the id
	// exists, so the secret is whichever was stored first.
	if _, err := s.db.NewInsert().Model(&row).On("CONFLICT (id) DO UPDATE").Set("id = EXCLUDED.id").
		Returning("secret").Exec(ctx); err != nil {
		return uuid.Nil, "", fmt.Errorf("store webhook secret: %w", err)
	}
	return row.ID, row.Secret, nil
}

// Values returns the secrets of ids, in the order of ids; a missing one is
// left out.
func (s *Secrets) Values(ctx context.Context, ids []uuid.UUID) ([]string, error) {
	var rows []secretRow
	if err := s.db.NewSelect().Model(&rows).Where("id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("read webhook secrets: %w", err)
	}
	byID := make(map[uuid.UUID]string, len(rows))
	for _, r := range rows {
		byID[r.ID] = r.Secret
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if v, ok := byID[id]; ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// orphanAge is how long a secret may exist unused before Housekeep removes
// it: a create that stored its secret and then failed leaves one behind,
// and a create under way must not lose its secret.
const orphanAge = time.Hour

// Housekeep removes the secrets nothing signs with any more: rotated out
// and past their grace, of deleted webhooks, or orphaned by a failed
// create.
func (s *Secrets) Housekeep(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.NewRaw(`DELETE FROM webhook_secrets s WHERE s.created_at < ? AND NOT EXISTS (
		SELECT 1 FROM webhooks w WHERE w.secret_id = s.id
		   OR (w.previous_secret_id = s.id AND w.previous_valid_until > ?))
		AND NOT EXISTS (SELECT 1 FROM webhook_routes r WHERE r.secret_id = s.id
		   OR (r.previous_secret_id = s.id AND r.previous_valid_until > ?))`,
		now.Add(-orphanAge), now, now).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("remove unused webhook secrets: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
