package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"golang.org/x/sync/errgroup"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/stream"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/shape"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
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
	// StatusUnknown is a delivery whose job ended without its outcome
	// recorded: its last attempt may have reached the receiver. It is
	// set by housekeeping (markUnknown) and may be redelivered.
	StatusUnknown = "unknown"
)

// deliveryRow is a row of webhook_deliveries: one stored EventItemAdded
// for one webhook. EventID is that stored event's id (the deliveries'
// x-service-event-id); WebhookEvent is the webhook event it announces
// (event.item_added, column event); EventFeedID is the item's event feed.
type deliveryRow struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:d"`

	ID             uuid.UUID `bun:"id,pk,type:uuid"`
	WebhookID      uuid.UUID `bun:"webhook_id,type:uuid"`
	OrganizationID uuid.UUID `bun:"organization_id,type:uuid"`
	EventID        uuid.UUID `bun:"event_id,type:uuid"`
	WebhookEvent   string    `bun:"event"`
	EventFeedID    uuid.UUID `bun:"event_feed_id,type:uuid"`
	ItemID         uuid.UUID `bun:"item_id,type:uuid"`
	Status         string    `bun:"status"`
	Runs           int       `bun:"runs"`
	CreatedAt      time.Time `bun:"created_at"`
	UpdatedAt      time.Time `bun:"updated_at"`
}

// payloadRow is a row of webhook_payloads: the exact body every attempt
// of every delivery of one stored event sends.
type payloadRow struct {
	bun.BaseModel `bun:"table:webhook_payloads"`

	EventID   uuid.UUID `bun:"event_id,pk,type:uuid"`
	Body      string    `bun:"body"`
	CreatedAt time.Time `bun:"created_at"`
}

// DeliveryID is the id of one stored event's delivery to one webhook: derived, so
// the same pair can never be two deliveries.
func DeliveryID(webhookID, eventID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(webhookID, eventID[:])
}

// dispatcher queues one delivery per matching webhook for each item added
// to an event feed, in the transaction of its checkpoint.
type dispatcher struct{ svc *Service }

// DispatcherName is the dispatcher's checkpoint.
const DispatcherName = "webhook-dispatch"

func (*dispatcher) Name() string     { return DispatcherName }
func (*dispatcher) Version() int     { return 1 }
func (*dispatcher) Tables() []string { return []string{"webhook_routes"} }

func (d *dispatcher) Handlers() []projections.Handler {
	return append(webhooks.Handlers("webhook_routes", d.queuePending), projections.OnEnvelope(d.itemAdded))
}

// added is an item waiting to be queued with the rest of its batch.
type added struct {
	item domain.HappeningItemAdded
	env  projections.Envelope
	// eventID is the EventItemAdded's id in the log: the deliveries'
	// x-service-event-id.
	eventID uuid.UUID
}

// itemAdded defers an added item to the end of the batch (or to the next
// change of a subscription, whichever comes first), where the batch's
// items are matched, rendered and queued together. Only the first add of
// a happening to a feed is an item_added; EventItemLinked is not handled.
func (d *dispatcher) itemAdded(ctx context.Context, db bun.IDB, e domain.HappeningItemAdded, env projections.Envelope) error {
	id, err := uuid.Parse(env.EventID)
	if err != nil {
		return fmt.Errorf("event id %q: %w", env.EventID, err)
	}
	a := added{item: e, env: env, eventID: id}
	if b, ok := projections.Deferred(ctx, d, d.newBatch); ok {
		b.items = append(b.items, a)
		return nil
	}
	return (&batch{svc: d.svc, items: []added{a}}).Flush(ctx, db)
}

func (d *dispatcher) newBatch() *batch { return &batch{svc: d.svc} }

// queuePending queues the items deferred so far before a subscription
// changes, so that each is matched against the subscriptions as they
// stood at its position in the log.
func (d *dispatcher) queuePending(ctx context.Context, db bun.IDB) error {
	if b, ok := projections.Deferred(ctx, d, d.newBatch); ok {
		return b.Flush(ctx, db)
	}
	return nil
}

// batch is the items a batch added, queued in its transaction: a few
// multi-row statements rather than several round trips per item.
type batch struct {
	svc   *Service
	items []added
}

// renderers bounds the happening streams read at once while rendering.
const renderers = 8

func (b *batch) Flush(ctx context.Context, db bun.IDB) error {
	items := b.items
	b.items = nil
	if len(items) == 0 {
		return nil
	}
	// Items an installation this log was moved from delivered already are
	// not delivered again.
	through, err := deliveredThrough(ctx, db)
	if err != nil {
		return err
	}
	items = slices.DeleteFunc(items, func(a added) bool { return !through.Less(a.env.Position) })
	if len(items) == 0 {
		return nil
	}
	hooks, err := match(ctx, db, items)
	if err != nil {
		return err
	}
	payloads := make([]payloadRow, len(items))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(renderers)
	for i, a := range items {
		if len(hooks[i]) == 0 {
			continue
		}
		g.Go(func() error {
			details, err := b.svc.detailsAt(gctx, a.item.HappeningID, a.env.Position)
			if err != nil {
				return err
			}
			// A webhook with a filter gets only the items whose event
			// matched it as of the add.
			hooks[i] = slices.DeleteFunc(hooks[i], func(r route) bool { return !domain.WebhookFilterMatches(r.Filter, details) })
			if len(hooks[i]) == 0 {
				return nil
			}
			body, err := b.svc.renderDetails(a.item, details)
			payloads[i] = payloadRow{EventID: a.eventID, Body: string(body), CreatedAt: a.env.RecordedAt}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var rows []payloadRow
	var deliveries []deliveryRow
	for i, a := range items {
		if len(hooks[i]) == 0 {
			continue
		}
		rows = append(rows, payloads[i])
		for _, h := range hooks[i] {
			deliveries = append(deliveries, deliveryRow{
				ID: DeliveryID(h.ID, a.eventID), WebhookID: h.ID, OrganizationID: a.item.OrganizationID, EventID: a.eventID,
				WebhookEvent: domain.WebhookItemAdded, EventFeedID: a.item.FeedID, ItemID: a.item.ItemID,
				Status: StatusPending, Runs: 1, CreatedAt: a.env.RecordedAt, UpdatedAt: a.env.RecordedAt,
			})
		}
	}
	return b.svc.queue(ctx, db, rows, deliveries)
}

// route is a webhook an item may go to, with the filter its event must
// pass (domain.WebhookFilterMatches).
type route struct {
	ID     uuid.UUID
	Filter string
}

// match returns, per item, the webhooks it goes to: the organization's
// enabled webhooks of event.item_added whose feeds include the item's (or
// that name no feed), each with its filter, which the caller applies.
func match(ctx context.Context, db bun.IDB, items []added) ([][]route, error) {
	orgs, feeds := make([]string, len(items)), make([]string, len(items))
	for i, a := range items {
		orgs[i], feeds[i] = a.item.OrganizationID.String(), a.item.FeedID.String()
	}
	var pairs []struct {
		N      int       `bun:"n"`
		ID     uuid.UUID `bun:"id"`
		Filter string    `bun:"filter"`
	}
	err := db.NewRaw(`SELECT i.n, r.id, r.filter FROM unnest(?::uuid[], ?::text[]) WITH ORDINALITY AS i(org, feed, n)
		JOIN webhook_routes r ON r.organization_id = i.org AND r.enabled AND ? = ANY(r.events)
		AND (cardinality(r.event_feed_ids) = 0 OR i.feed = ANY(r.event_feed_ids))
		ORDER BY i.n, r.id`, pgdialect.Array(orgs), pgdialect.Array(feeds), domain.WebhookItemAdded).Scan(ctx, &pairs)
	if err != nil {
		return nil, fmt.Errorf("match webhooks: %w", err)
	}
	hooks := make([][]route, len(items))
	for _, p := range pairs {
		hooks[p.N-1] = append(hooks[p.N-1], route{ID: p.ID, Filter: p.Filter})
	}
	return hooks, nil
}

// renderDetails makes the body of an item's deliveries from the log alone:
// its happening's details as of the add (detailsAt), whatever changed
// later.
func (s *Service) renderDetails(e domain.HappeningItemAdded, details domain.HappeningDetails) ([]byte, error) {
	data, err := s.cfg.Render(e, details)
	if err != nil {
		return nil, err
	}
	return shape.DeliveryBody(domain.WebhookItemAdded, e.At, data)
}

// detailsAt folds the happening's stream up to position at.
func (s *Service) detailsAt(ctx context.Context, happeningID uuid.UUID, at eventstore.Position) (domain.HappeningDetails, error) {
	var h domain.Happening
	if err := stream.FoldUntil(ctx, s.parts.Store, domain.HappeningStream(happeningID), &h, at); err != nil {
		return domain.HappeningDetails{}, err
	}
	if !h.Exists() {
		// An item is added after its happening is discovered; a log without the
		// discovery still gets its deliveries, with what the add says.
		s.logger.Warn("event item added before its happening was discovered", "happening", happeningID)
	}
	return h.Details(), nil
}

// queue records payloads and deliveries and queues a job per delivery, in
// the projector's transaction.
func (s *Service) queue(ctx context.Context, db bun.IDB, payloads []payloadRow, deliveries []deliveryRow) error {
	if len(deliveries) == 0 {
		return nil
	}
	tx, ok := db.(bun.Tx)
	if !ok {
		return errors.New("webhook deliveries must be queued in the projector's transaction")
	}
	if err := insertPayloads(ctx, tx, payloads); err != nil {
		return err
	}
	if err := insertDeliveries(ctx, tx, deliveries); err != nil {
		return err
	}
	jobs := make([]river.InsertManyParams, len(deliveries))
	for i, d := range deliveries {
		jobs[i] = deliveryJob(d.ID, 1)
	}
	if _, err := s.river.InsertManyTx(ctx, tx.Tx, jobs); err != nil {
		return fmt.Errorf("queue deliveries: %w", err)
	}
	// The job client may be stopped (gate.go): it starts once this
	// transaction commits.
	s.wakeGate()
	return nil
}

// insertPayloadsSQL and insertDeliveriesSQL take a batch's rows as one
// array per column, which pgx sends in binary (projections.ExecArrays, as
// the read models' batch writes do): one short statement, prepared
// once per connection, rather than a VALUES list of 1,000 rows that bun
// spelled out in text and Postgres parsed and planned anew for every chunk
// (planning alone was ~10 µs of each delivery: bench/webhooks/README.md).
// Both plans are index probes for the conflicts whatever the tables' size.
const insertPayloadsSQL = `INSERT INTO webhook_payloads (event_id, body, created_at)
	SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[])
	ON CONFLICT (event_id) DO NOTHING`

// A delivery's id is derived from its webhook and event (DeliveryID), so a
// conflict on the id is one on the pair: a delivery already queued is left
// as it is. New deliveries are pending, on their first run, updated when
// recorded.
const insertDeliveriesSQL = `INSERT INTO webhook_deliveries (id, webhook_id, organization_id, event_id, event, event_feed_id, item_id, status, runs, created_at, updated_at)
	SELECT d.id, d.webhook_id, d.organization_id, d.event_id, $8, d.event_feed_id, d.item_id, $9, 1, d.created_at, d.created_at
	FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[], $7::timestamptz[])
		AS d(id, webhook_id, organization_id, event_id, event_feed_id, item_id, created_at)
	ON CONFLICT (id) DO NOTHING`

func insertPayloads(ctx context.Context, db bun.IDB, payloads []payloadRow) error {
	for chunk := range slices.Chunk(payloads, projections.MaxRowsPerInsert) {
		ids, bodies, ats := make([][16]byte, len(chunk)), make([]string, len(chunk)), make([]time.Time, len(chunk))
		for i, p := range chunk {
			ids[i], bodies[i], ats[i] = p.EventID, p.Body, p.CreatedAt
		}
		if err := projections.ExecArrays(ctx, db, insertPayloadsSQL, ids, bodies, ats); err != nil {
			return fmt.Errorf("record delivery bodies: %w", err)
		}
	}
	return nil
}

func insertDeliveries(ctx context.Context, db bun.IDB, deliveries []deliveryRow) error {
	for chunk := range slices.Chunk(deliveries, projections.MaxRowsPerInsert) {
		n := len(chunk)
		ids, hooks, orgs, events := make([][16]byte, n), make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
		feeds, items, ats := make([][16]byte, n), make([][16]byte, n), make([]time.Time, n)
		for i, d := range chunk {
			if d.WebhookEvent != domain.WebhookItemAdded || d.Status != StatusPending || d.Runs != 1 || !d.UpdatedAt.Equal(d.CreatedAt) {
				return fmt.Errorf("delivery %s: only new item-added deliveries are queued here", d.ID)
			}
			ids[i], hooks[i], orgs[i], events[i] = d.ID, d.WebhookID, d.OrganizationID, d.EventID
			feeds[i], items[i], ats[i] = d.EventFeedID, d.ItemID, d.CreatedAt
		}
		if err := projections.ExecArrays(ctx, db, insertDeliveriesSQL, ids, hooks, orgs, events, feeds, items, ats,
			domain.WebhookItemAdded, StatusPending); err != nil {
			return fmt.Errorf("record deliveries: %w", err)
		}
	}
	return nil
}

// RecordDeliveredThrough records, in tx, that the item-added events up to
// and including position at were delivered elsewhere: by the installation
// an imported log was exported from (`feedsvc events import`). The
// dispatcher still reads them, to rebuild its copy of the subscriptions,
// but queues no delivery for them.
func RecordDeliveredThrough(ctx context.Context, tx pgx.Tx, at eventstore.Position) error {
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_delivered_through (commit_position, prepare_position) VALUES ($1, $2)
		ON CONFLICT (one) DO UPDATE SET commit_position = EXCLUDED.commit_position, prepare_position = EXCLUDED.prepare_position, recorded_at = now()`,
		int64(at.Commit), int64(at.Prepare)); err != nil {
		return fmt.Errorf("record the webhooks delivered through %s: %w", at, err)
	}
	return nil
}

// deliveredThrough is the position up to which deliveries were made
// elsewhere (Start when none were).
func deliveredThrough(ctx context.Context, db bun.IDB) (eventstore.Position, error) {
	var commit, prepare int64
	err := db.NewRaw("SELECT commit_position, prepare_position FROM webhook_delivered_through").Scan(ctx, &commit, &prepare)
	if errors.Is(err, sql.ErrNoRows) {
		return eventstore.Start, nil
	}
	if err != nil {
		return eventstore.Start, fmt.Errorf("read where deliveries start: %w", err)
	}
	return eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)}, nil
}
