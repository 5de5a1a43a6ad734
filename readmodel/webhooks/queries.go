// Package webhooks owns the webhooks read model: the webhook subscriptions
// of every organization (table webhooks), its projector, whose handlers the
// webhook dispatcher reuses for its own copy, and the queries the API and
// the sender read them with.
package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Queries answers reads of the webhooks read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the webhooks' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// Webhook is a row of webhooks: one subscription, with the ids of the
// secrets that sign its deliveries (the secrets themselves are elsewhere).
type Webhook struct {
	bun.BaseModel `bun:"table:webhooks"`

	ID                 uuid.UUID  `bun:"id,pk,type:uuid"`
	OrganizationID     uuid.UUID  `bun:"organization_id,type:uuid"`
	URL                string     `bun:"url"`
	Events             []string   `bun:"events,array"`
	EventFeedIDs       []string   `bun:"event_feed_ids,array"`
	Filter             string     `bun:"filter"`
	Enabled            bool       `bun:"enabled"`
	EnabledBy          string     `bun:"enabled_by"`
	EnabledReason      string     `bun:"enabled_reason"`
	SecretID           uuid.UUID  `bun:"secret_id,type:uuid"`
	PreviousSecretID   *uuid.UUID `bun:"previous_secret_id,type:uuid"`
	PreviousValidUntil *time.Time `bun:"previous_valid_until"`
	CreatedAt          time.Time  `bun:"created_at"`
	UpdatedAt          time.Time  `bun:"updated_at"`
}

// State is the webhook as the domain describes it.
func (w Webhook) State() domain.WebhookState {
	ids := make([]uuid.UUID, 0, len(w.EventFeedIDs))
	for _, s := range w.EventFeedIDs {
		if id, err := uuid.Parse(s); err == nil {
			ids = append(ids, id)
		}
	}
	return domain.WebhookState{
		ID: w.ID, Config: domain.WebhookConfig{URL: w.URL, Events: w.Events, EventFeedIDs: ids, Filter: w.Filter},
		Enabled: w.Enabled, EnabledBy: w.EnabledBy, Reason: w.EnabledReason, SecretID: w.SecretID,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
	}
}

// SigningSecrets are the ids of the secrets that sign at t: the current
// one, and the previous one during its grace after a rotation.
func (w Webhook) SigningSecrets(t time.Time) []uuid.UUID {
	ids := []uuid.UUID{w.SecretID}
	if w.PreviousSecretID != nil && w.PreviousValidUntil != nil && t.Before(*w.PreviousValidUntil) {
		ids = append(ids, *w.PreviousSecretID)
	}
	return ids
}

// UUIDStrings renders ids as the text the array columns hold.
func UUIDStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// Webhooks lists an organization's webhooks, newest first (D7).
func (q *Queries) Webhooks(ctx context.Context, org uuid.UUID) ([]Webhook, error) {
	out := []Webhook{}
	err := q.db.NewSelect().Model(&out).Where("organization_id = ?", org).
		OrderExpr("created_at DESC, id DESC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list webhooks of %s: %w", org, err)
	}
	return out, nil
}

// Webhook returns one webhook of the organization.
func (q *Queries) Webhook(ctx context.Context, org, id uuid.UUID) (Webhook, error) {
	w, err := q.WebhookByID(ctx, id)
	if err != nil {
		return Webhook{}, err
	}
	if w.OrganizationID != org {
		return Webhook{}, &domain.NotFoundError{Resource: "webhook", ID: id.String()}
	}
	return w, nil
}

// WebhookByID returns a webhook whatever its organization: for the sender.
func (q *Queries) WebhookByID(ctx context.Context, id uuid.UUID) (Webhook, error) {
	var w Webhook
	err := q.db.NewSelect().Model(&w).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, &domain.NotFoundError{Resource: "webhook", ID: id.String()}
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("get webhook %s: %w", id, err)
	}
	return w, nil
}

// WebhookByURL returns the organization's newest webhook with an endpoint.
func (q *Queries) WebhookByURL(ctx context.Context, org uuid.UUID, url string) (Webhook, bool, error) {
	var w Webhook
	err := q.db.NewSelect().Model(&w).Where("organization_id = ? AND url = ?", org, url).
		OrderExpr("created_at DESC, id DESC").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, false, nil
	}
	if err != nil {
		return Webhook{}, false, fmt.Errorf("find webhook by url: %w", err)
	}
	return w, true, nil
}
