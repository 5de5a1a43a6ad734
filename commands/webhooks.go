package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// CreateWebhook subscribes an endpoint; SecretID names a signing secret
// the caller has already stored.
type CreateWebhook struct {
	Org      uuid.UUID
	Config   domain.WebhookConfig
	SecretID uuid.UUID
}

// WebhookRef names a webhook as one organization asks for it.
type WebhookRef struct {
	Org uuid.UUID
	ID  uuid.UUID
}

// UpdateWebhook changes the members of a webhook that are set.
type UpdateWebhook struct {
	WebhookRef
	Update domain.WebhookUpdate
}

// RotateWebhookSecret makes SecretID the signing secret.
type RotateWebhookSecret struct {
	WebhookRef
	SecretID uuid.UUID
}

// DisableFailingWebhook is the sender reporting a webhook whose receiver
// has failed every delivery since FailingSince, last at LastFailure.
type DisableFailingWebhook struct {
	ID           uuid.UUID
	FailingSince time.Time
	LastFailure  time.Time
}

// CreateWebhook decides and stores a new subscription.
func (h *Handler) CreateWebhook(ctx context.Context, c CreateWebhook) (domain.WebhookState, Result, error) {
	id := h.newID("webhook")
	w, res, err := decide(ctx, h, change[*domain.Webhook]{
		stream: domain.WebhookStream(id), org: c.Org, mostlyNew: true,
		empty: func() *domain.Webhook { return &domain.Webhook{} },
		decide: func(w *domain.Webhook) ([]domain.Event, error) {
			return w.Create(id, c.Org, c.Config, c.SecretID, h.now())
		},
	})
	if err != nil {
		return domain.WebhookState{}, Result{}, fmt.Errorf("create webhook: %w", err)
	}
	return w.State(), res, nil
}

// UpdateWebhook applies a partial update and returns the webhook as it
// left it.
func (h *Handler) UpdateWebhook(ctx context.Context, c UpdateWebhook) (domain.WebhookState, Result, error) {
	return h.changeWebhook(ctx, c.WebhookRef, func(w *domain.Webhook) ([]domain.Event, error) {
		return w.Update(c.Org, c.ID, c.Update, h.now())
	})
}

// RotateWebhookSecret switches a webhook to a new secret.
func (h *Handler) RotateWebhookSecret(ctx context.Context, c RotateWebhookSecret) (domain.WebhookState, Result, error) {
	return h.changeWebhook(ctx, c.WebhookRef, func(w *domain.Webhook) ([]domain.Event, error) {
		return w.RotateSecret(c.Org, c.ID, c.SecretID, h.now())
	})
}

// DeleteWebhook removes a subscription.
func (h *Handler) DeleteWebhook(ctx context.Context, c WebhookRef) (Result, error) {
	_, res, err := h.changeWebhook(ctx, c, func(w *domain.Webhook) ([]domain.Event, error) {
		return w.Delete(c.Org, c.ID, h.now())
	})
	return res, err
}

// DisableFailingWebhook disables a webhook by the service when its
// receiver has failed long enough; it reports whether it did.
func (h *Handler) DisableFailingWebhook(ctx context.Context, c DisableFailingWebhook) (bool, error) {
	_, res, err := decide(ctx, h, change[*domain.Webhook]{
		stream: domain.WebhookStream(c.ID),
		empty:  func() *domain.Webhook { return &domain.Webhook{} },
		decide: func(w *domain.Webhook) ([]domain.Event, error) {
			return w.DisableForFailures(c.FailingSince, c.LastFailure, h.now()), nil
		},
	})
	if err != nil {
		return false, fmt.Errorf("disable failing webhook %s: %w", c.ID, err)
	}
	return !res.Empty(), nil
}

func (h *Handler) changeWebhook(ctx context.Context, ref WebhookRef, decideWebhook func(*domain.Webhook) ([]domain.Event, error)) (domain.WebhookState, Result, error) {
	w, res, err := decide(ctx, h, change[*domain.Webhook]{
		stream: domain.WebhookStream(ref.ID), org: ref.Org,
		empty:  func() *domain.Webhook { return &domain.Webhook{} },
		decide: decideWebhook,
	})
	if err != nil {
		return domain.WebhookState{}, Result{}, fmt.Errorf("change webhook %s: %w", ref.ID, err)
	}
	return w.State(), res, nil
}
