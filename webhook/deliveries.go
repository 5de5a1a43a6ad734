package webhook

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

// Delivery is one stored event's delivery to one webhook, as the API
// shows it: EventID is the stored EventItemAdded's id, WebhookEvent the
// webhook event it announces (the API's member "event").
type Delivery struct {
	ID           uuid.UUID
	WebhookID    uuid.UUID
	EventID      uuid.UUID
	WebhookEvent string
	EventFeedID  uuid.UUID
	ItemID       uuid.UUID
	Status       string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Attempts     []Attempt
}

// Attempt is one POST of a delivery.
type Attempt struct {
	// Run is 1 for the first delivery, n for the (n-1)th redelivery.
	Run        int
	At         time.Time
	StatusCode *int
	Error      string
	Duration   time.Duration
}

type attemptRow struct {
	bun.BaseModel `bun:"table:webhook_attempts"`

	ID         int64     `bun:"id,pk"`
	DeliveryID uuid.UUID `bun:"delivery_id,type:uuid"`
	Run        int       `bun:"run"`
	At         time.Time `bun:"at"`
	StatusCode *int      `bun:"status_code"`
	Error      string    `bun:"error"`
	DurationMs int64     `bun:"duration_ms"`
}

// Deliveries lists a webhook's deliveries, newest first, with their
// attempts; total counts them all. The webhook must be the caller's.
func (s *Service) Deliveries(ctx context.Context, org, webhookID uuid.UUID, limit, offset int) ([]Delivery, int, error) {
	if _, err := s.parts.Queries.Webhook(ctx, org, webhookID); err != nil {
		return nil, 0, err
	}
	var rows []deliveryRow
	total, err := s.parts.DB.Bun.NewSelect().Model(&rows).
		Where("webhook_id = ? AND organization_id = ?", webhookID, org).
		OrderExpr("created_at DESC, id DESC").Limit(int64(limit)).Offset(int64(offset)).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list deliveries of webhook %s: %w", webhookID, err)
	}
	out, err := s.withAttempts(ctx, s.parts.DB.Bun, rows)
	return out, int(total), err
}

// Delivery returns one delivery of the caller's webhook.
func (s *Service) Delivery(ctx context.Context, org, webhookID, id uuid.UUID) (Delivery, error) {
	if _, err := s.parts.Queries.Webhook(ctx, org, webhookID); err != nil {
		return Delivery{}, err
	}
	var row deliveryRow
	err := s.parts.DB.Bun.NewSelect().Model(&row).
		Where("id = ? AND webhook_id = ? AND organization_id = ?", id, webhookID, org).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, &domain.NotFoundError{Resource: "delivery", ID: id.String()}
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("get delivery %s: %w", id, err)
	}
	out, err := s.withAttempts(ctx, s.parts.DB.Bun, []deliveryRow{row})
	if err != nil {
		return Delivery{}, err
	}
	return out[0], nil
}

func (s *Service) withAttempts(ctx context.Context, db bun.IDB, rows []deliveryRow) ([]Delivery, error) {
	out := make([]Delivery, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	index := make(map[uuid.UUID]int, len(rows))
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		out[i] = Delivery{
			ID: r.ID, WebhookID: r.WebhookID, EventID: r.EventID, WebhookEvent: r.WebhookEvent, EventFeedID: r.EventFeedID,
			ItemID: r.ItemID, Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Attempts: []Attempt{},
		}
		index[r.ID], ids[i] = i, r.ID
	}
	var attempts []attemptRow
	if err := db.NewSelect().Model(&attempts).Where("delivery_id IN (?)", bun.In(ids)).
		OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	for _, a := range attempts {
		d := &out[index[a.DeliveryID]]
		d.Attempts = append(d.Attempts, Attempt{
			Run: a.Run, At: a.At, StatusCode: a.StatusCode, Error: a.Error, Duration: time.Duration(a.DurationMs) * time.Millisecond,
		})
	}
	return out, nil
}

// Redeliver queues a delivery again: a new run of up to MaxAttempts
// attempts with the same body and event id. A delivery still under way, or
// of a disabled webhook, answers a conflict.
func (s *Service) Redeliver(ctx context.Context, org, webhookID, id uuid.UUID) (Delivery, error) {
	hook, err := s.parts.Queries.Webhook(ctx, org, webhookID)
	if err != nil {
		return Delivery{}, err
	}
	if !hook.Enabled {
		return Delivery{}, &domain.ConflictError{Message: "the webhook is disabled; enable it (PATCH enabled: true) before redelivering"}
	}
	// The answer is the delivery as this transaction left it (pending, its
	// earlier attempts): a read after the commit could already see the
	// redelivery done.
	var answer Delivery
	err = s.parts.DB.Bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var row deliveryRow
		err := tx.NewSelect().Model(&row).
			Where("id = ? AND webhook_id = ? AND organization_id = ?", id, webhookID, org).For("UPDATE").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return &domain.NotFoundError{Resource: "delivery", ID: id.String()}
		}
		if err != nil {
			return fmt.Errorf("lock delivery %s: %w", id, err)
		}
		if row.Status == StatusPending {
			return &domain.ConflictError{Message: "the delivery is still under way; redeliver it once it has been delivered or has failed"}
		}
		run, now := row.Runs+1, s.cfg.Now()
		if _, err := tx.NewRaw("UPDATE webhook_deliveries SET status = ?, runs = ?, updated_at = ? WHERE id = ?",
			StatusPending, run, now, id).Exec(ctx); err != nil {
			return fmt.Errorf("mark delivery %s for redelivery: %w", id, err)
		}
		job := deliveryJob(id, run)
		if _, err := s.river.InsertTx(ctx, tx.Tx, job.Args, job.InsertOpts); err != nil {
			return fmt.Errorf("queue redelivery of %s: %w", id, err)
		}
		row.Status, row.Runs, row.UpdatedAt = StatusPending, run, now
		out, err := s.withAttempts(ctx, tx, []deliveryRow{row})
		if err != nil {
			return err
		}
		answer = out[0]
		return nil
	})
	if err != nil {
		return Delivery{}, err
	}
	// In the webhooks role's process the stopped job client starts at
	// once; elsewhere that process's gate finds the job at its next look.
	s.wakeGate()
	return answer, nil
}
