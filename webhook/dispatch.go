package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/projections"
)

// queueName is River's queue for webhook jobs.
const queueName = "webhooks"

// deliveryArgs is one run of a delivery: run 1 is the first, each
// redelivery the next. A (delivery, run) pair is queued once.
type deliveryArgs struct {
	DeliveryID uuid.UUID `json:"deliveryId" river:"unique"`
	Run        int       `json:"run" river:"unique"`
}

func (deliveryArgs) Kind() string { return "webhook_delivery" }

func deliveryJob(id uuid.UUID, run int) river.InsertManyParams {
	return river.InsertManyParams{Args: deliveryArgs{DeliveryID: id, Run: run}, InsertOpts: &river.InsertOpts{
		Queue: queueName, MaxAttempts: MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true},
	}}
}

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// deliveryRow is a row of webhook_deliveries: one event for one webhook,
// with the exact body every attempt sends.
type deliveryRow struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:d"`

	ID             uuid.UUID `bun:"id,pk,type:uuid"`
	WebhookID      uuid.UUID `bun:"webhook_id,type:uuid"`
	OrganizationID uuid.UUID `bun:"organization_id,type:uuid"`
	EventID        uuid.UUID `bun:"event_id,type:uuid"`
	Event          string    `bun:"event"`
	EventFeedID    uuid.UUID `bun:"event_feed_id,type:uuid"`
	ItemID         uuid.UUID `bun:"item_id,type:uuid"`
	Body           string    `bun:"body"`
	Status         string    `bun:"status"`
	Runs           int       `bun:"runs"`
	CreatedAt      time.Time `bun:"created_at"`
	UpdatedAt      time.Time `bun:"updated_at"`
}

// DeliveryID is the id of one event's delivery to one webhook: derived, so
// the same pair can never be two deliveries.
func DeliveryID(webhookID, eventID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(webhookID, eventID[:])
}

// body is what every delivery posts (api.md 6).
type body struct {
	Event     string          `json:"event"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// dispatcher queues one delivery per matching webhook for each item added
// to an event feed, in the transaction of its checkpoint.
type dispatcher struct{ svc *Service }

// DispatcherName is the dispatcher's checkpoint.
const DispatcherName = "webhook-dispatch"

func (*dispatcher) Name() string     { return DispatcherName }
func (*dispatcher) Tables() []string { return []string{"webhook_routes"} }

func (d *dispatcher) Handlers() []projections.Handler {
	return append(projections.WebhookHandlers("webhook_routes"), projections.OnEnvelope(d.itemAdded))
}

// itemAdded queues the deliveries of one added item. Only the first add of
// an event to a feed is an item_added; EventItemLinked is not handled.
func (d *dispatcher) itemAdded(ctx context.Context, db bun.IDB, e domain.EventItemAdded, env projections.Envelope) error {
	var hooks []uuid.UUID
	err := db.NewRaw(`SELECT id FROM webhook_routes WHERE organization_id = ? AND enabled AND ? = ANY(events)
		AND (cardinality(event_feed_ids) = 0 OR ? = ANY(event_feed_ids)) ORDER BY id`,
		e.OrganizationID, domain.WebhookItemAdded, e.FeedID.String()).Scan(ctx, &hooks)
	if err != nil {
		return fmt.Errorf("match webhooks: %w", err)
	}
	if len(hooks) == 0 {
		return nil
	}
	eventID, err := uuid.Parse(env.EventID)
	if err != nil {
		return fmt.Errorf("event id %q: %w", env.EventID, err)
	}
	payload, err := d.render(ctx, e, env.Position)
	if err != nil {
		return err
	}
	rows := make([]deliveryRow, len(hooks))
	for i, h := range hooks {
		rows[i] = deliveryRow{
			ID: DeliveryID(h, eventID), WebhookID: h, OrganizationID: e.OrganizationID, EventID: eventID,
			Event: domain.WebhookItemAdded, EventFeedID: e.FeedID, ItemID: e.ItemID, Body: string(payload),
			Status: StatusPending, Runs: 1, CreatedAt: env.RecordedAt, UpdatedAt: env.RecordedAt,
		}
	}
	if w, ok := projections.Deferred(ctx, d, func() *enqueue { return &enqueue{svc: d.svc} }); ok {
		w.rows = append(w.rows, rows...)
		return nil
	}
	return (&enqueue{svc: d.svc, rows: rows}).Flush(ctx, db)
}

// render makes the body of an item's deliveries from the log alone: the
// event's details as of the add, whatever changed later.
func (d *dispatcher) render(ctx context.Context, e domain.EventItemAdded, at eventstore.Position) ([]byte, error) {
	details, err := d.detailsAt(ctx, e.EventID, at)
	if err != nil {
		return nil, err
	}
	data, err := d.svc.cfg.Render(e, details)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(body{Event: domain.WebhookItemAdded, Timestamp: stamp(e.At), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode delivery body: %w", err)
	}
	return b, nil
}

// detailsAt folds the event's stream up to position at.
func (d *dispatcher) detailsAt(ctx context.Context, eventID uuid.UUID, at eventstore.Position) (domain.EventDetails, error) {
	const page = 100
	var event domain.CalendarEvent
	stream := domain.CalendarEventStream(eventID)
	for from := uint64(0); ; {
		recs, err := d.svc.parts.Store.ReadStream(ctx, stream, from, page)
		if errors.Is(err, eventstore.ErrStreamNotFound) {
			break
		}
		if err != nil {
			return domain.EventDetails{}, fmt.Errorf("read %s: %w", stream, err)
		}
		for _, r := range recs {
			if at.Less(r.Position) {
				return event.Details(), nil
			}
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				return domain.EventDetails{}, fmt.Errorf("read %s: %w", stream, err)
			}
			event.Apply(e)
		}
		if len(recs) < page {
			break
		}
		from = recs[len(recs)-1].Revision + 1
	}
	if !event.Exists() {
		// An item is added after its event is discovered; a log without the
		// discovery still gets its deliveries, with what the add says.
		d.svc.logger.Warn("event item added before its event was discovered", "event", eventID)
	}
	return event.Details(), nil
}

// enqueue is a batch's deliveries, written and queued when the batch ends,
// in its transaction: a few multi-row statements rather than two per
// delivery.
type enqueue struct {
	svc  *Service
	rows []deliveryRow
}

func (q *enqueue) Flush(ctx context.Context, db bun.IDB) error {
	if len(q.rows) == 0 {
		return nil
	}
	tx, ok := db.(bun.Tx)
	if !ok {
		return errors.New("webhook deliveries must be queued in the projector's transaction")
	}
	if _, err := tx.NewInsert().Model(&q.rows).On("CONFLICT (webhook_id, event_id) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("record deliveries: %w", err)
	}
	jobs := make([]river.InsertManyParams, len(q.rows))
	for i, r := range q.rows {
		jobs[i] = deliveryJob(r.ID, 1)
	}
	if _, err := q.svc.river.InsertManyTx(ctx, sqlTx(tx), jobs); err != nil {
		return fmt.Errorf("queue deliveries: %w", err)
	}
	return nil
}

func sqlTx(tx bun.Tx) *sql.Tx { return tx.Tx }
