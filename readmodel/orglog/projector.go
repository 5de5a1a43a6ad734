// Package orglog owns the organization's log (GET /log and its live
// stream): per organization, the events of the global log that concern it,
// in log order (table org_log), what its projector routes them by, and its
// queries.
//
// An organization's log holds its feeds' events (created, renamed,
// described, configured, enabled, disabled, deleted; sources attached,
// enabled, disabled, detached), its source records (registered, linked),
// items added to its feeds (news items with their article's content, event
// items with the calendar event's details as they stood when it was
// added, and each further attachment that found one), the feedback given
// on them, its webhooks' changes, and the changes of calendar events its
// event feeds carry. Shared facts (an article, a calendar event) appear
// only so, as they reached the organization's feeds: an article discovered
// or a calendar event found by a source nobody of the organization's feeds
// carries is not in its log. Feed subscriptions are not in it (their
// events hold secret hashes).
package orglog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/orglog/migrations"
)

// Projector projects the organizations' logs.
type Projector struct{}

func (Projector) Name() string { return "orglog" }
func (Projector) Version() int { return 1 }
func (Projector) Tables() []string {
	return []string{"org_log", "org_log_feeds", "org_log_webhooks", "org_log_happenings", "org_log_happening_items"}
}

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.FeedCreated, env projections.Envelope) error {
			if err := projections.Exec(db.NewRaw(`INSERT INTO org_log_feeds (feed_id, organization_id) VALUES (?, ?)
				ON CONFLICT (feed_id) DO NOTHING`, e.FeedID, e.OrganizationID).Exec(ctx)); err != nil {
				return err
			}
			return record(ctx, db, env, e.OrganizationID, []uuid.UUID{e.FeedID}, nil)
		}),
		ofFeed(func(e domain.FeedRenamed) uuid.UUID { return e.FeedID }, nil),
		ofFeed(func(e domain.FeedDescribed) uuid.UUID { return e.FeedID }, nil),
		ofFeed(func(e domain.FeedEnabled) uuid.UUID { return e.FeedID }, nil),
		ofFeed(func(e domain.FeedDisabled) uuid.UUID { return e.FeedID }, nil),
		ofFeed(func(e domain.FeedConfigured) uuid.UUID { return e.FeedID }, nil),
		ofFeed(func(e domain.FeedDeleted) uuid.UUID { return e.FeedID }, func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			// A deleted feed carries no calendar event any more.
			return projections.Exec(db.NewRaw(`DELETE FROM org_log_happening_items WHERE feed_id = ?`, e.FeedID).Exec(ctx))
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.SourceAttached, env projections.Envelope) error {
			return record(ctx, db, env, e.OrganizationID, []uuid.UUID{e.FeedID}, nil)
		}),
		ofFeed(func(e domain.SourceEnabled) uuid.UUID { return e.FeedID }, nil),
		ofFeed(func(e domain.SourceDisabled) uuid.UUID { return e.FeedID }, nil),
		ofFeed(func(e domain.SourceDetached) uuid.UUID { return e.FeedID }, func(ctx context.Context, db bun.IDB, e domain.SourceDetached) error {
			// The calendar events only this attachment found leave the feed.
			return projections.Exec(db.NewRaw(`DELETE FROM org_log_happening_items WHERE feed_id = ? AND attachment_id = ?`,
				e.FeedID, e.AttachmentID).Exec(ctx))
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.SourceRegistered, env projections.Envelope) error {
			return record(ctx, db, env, e.OrganizationID, nil, nil)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.SourceLinkedToOrganization, env projections.Envelope) error {
			return record(ctx, db, env, e.OrganizationID, nil, nil)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.NewsItemAdded, env projections.Envelope) error {
			return record(ctx, db, env, e.OrganizationID, []uuid.UUID{e.FeedID}, nil)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.FeedbackGiven, env projections.Envelope) error {
			return record(ctx, db, env, e.OrganizationID, []uuid.UUID{e.FeedID}, nil)
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.HappeningDiscovered) error {
			return keepDetails(ctx, db, e.HappeningID, e.Details)
		}),
		projections.OnEnvelope(projectHappeningChanged),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningItemAdded, env projections.Envelope) error {
			if err := carry(ctx, db, e.HappeningID, e.FeedID, e.AttachmentID, e.OrganizationID); err != nil {
				return err
			}
			// The calendar event as it stood when it reached the feed.
			var details string
			err := db.NewRaw(`SELECT details FROM org_log_happenings WHERE happening_id = ?`, e.HappeningID).Scan(ctx, &details)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("read details of calendar event %s: %w", e.HappeningID, err)
			}
			var extra map[string]json.RawMessage
			if len(details) > 0 {
				extra = map[string]json.RawMessage{"event": json.RawMessage(details)}
			}
			return record(ctx, db, env, e.OrganizationID, []uuid.UUID{e.FeedID}, extra)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.HappeningItemLinked, env projections.Envelope) error {
			org, ok, err := feedOrganization(ctx, db, e.FeedID)
			if err != nil || !ok {
				return err
			}
			if err := carry(ctx, db, e.HappeningID, e.FeedID, e.AttachmentID, org); err != nil {
				return err
			}
			return record(ctx, db, env, org, []uuid.UUID{e.FeedID}, nil)
		}),
		projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e domain.WebhookCreated, env projections.Envelope) error {
			if err := projections.Exec(db.NewRaw(`INSERT INTO org_log_webhooks (webhook_id, organization_id) VALUES (?, ?)
				ON CONFLICT (webhook_id) DO NOTHING`, e.WebhookID, e.OrganizationID).Exec(ctx)); err != nil {
				return err
			}
			return record(ctx, db, env, e.OrganizationID, nil, nil)
		}),
		ofWebhook(func(e domain.WebhookChanged) uuid.UUID { return e.WebhookID }),
		ofWebhook(func(e domain.WebhookEnabled) uuid.UUID { return e.WebhookID }),
		ofWebhook(func(e domain.WebhookDisabled) uuid.UUID { return e.WebhookID }),
		ofWebhook(func(e domain.WebhookSecretRotated) uuid.UUID { return e.WebhookID }),
		ofWebhook(func(e domain.WebhookDeleted) uuid.UUID { return e.WebhookID }),
	}
}

// ofFeed records an event of a feed in its organization's log, after
// running then (when set).
func ofFeed[E domain.Event](feed func(E) uuid.UUID, then func(ctx context.Context, db bun.IDB, e E) error) projections.Handler {
	return projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e E, env projections.Envelope) error {
		if then != nil {
			if err := then(ctx, db, e); err != nil {
				return err
			}
		}
		id := feed(e)
		org, ok, err := feedOrganization(ctx, db, id)
		if err != nil || !ok {
			return err
		}
		return record(ctx, db, env, org, []uuid.UUID{id}, nil)
	})
}

// ofWebhook records an event of a webhook in its organization's log.
func ofWebhook[E domain.Event](webhook func(E) uuid.UUID) projections.Handler {
	return projections.OnEnvelope(func(ctx context.Context, db bun.IDB, e E, env projections.Envelope) error {
		var org uuid.UUID
		err := db.NewRaw(`SELECT organization_id FROM org_log_webhooks WHERE webhook_id = ?`, webhook(e)).Scan(ctx, &org)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // a webhook the log never saw created: no organization to tell
		}
		if err != nil {
			return fmt.Errorf("find the organization of webhook %s: %w", webhook(e), err)
		}
		return record(ctx, db, env, org, nil, nil)
	})
}

// feedOrganization is the organization of a feed; false for a feed the
// log never saw created.
func feedOrganization(ctx context.Context, db bun.IDB, feed uuid.UUID) (uuid.UUID, bool, error) {
	var org uuid.UUID
	err := db.NewRaw(`SELECT organization_id FROM org_log_feeds WHERE feed_id = ?`, feed).Scan(ctx, &org)
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("find the organization of feed %s: %w", feed, err)
	}
	return org, true, nil
}

// keepDetails keeps a calendar event's latest details.
func keepDetails(ctx context.Context, db bun.IDB, id uuid.UUID, d domain.HappeningDetails) error {
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode details of calendar event %s: %w", id, err)
	}
	return projections.Exec(db.NewRaw(`INSERT INTO org_log_happenings (happening_id, details) VALUES (?, ?)
		ON CONFLICT (happening_id) DO UPDATE SET details = EXCLUDED.details`, id, string(data)).Exec(ctx))
}

// carry notes that a feed carries a calendar event through an attachment.
func carry(ctx context.Context, db bun.IDB, happening, feed, attachment, org uuid.UUID) error {
	return projections.Exec(db.NewRaw(`INSERT INTO org_log_happening_items (happening_id, feed_id, attachment_id, organization_id)
		VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, happening, feed, attachment, org).Exec(ctx))
}

// projectHappeningChanged keeps the new details and records the change in
// the log of each organization whose feeds carry the calendar event, with
// those feeds.
func projectHappeningChanged(ctx context.Context, db bun.IDB, e domain.HappeningChanged, env projections.Envelope) error {
	if err := keepDetails(ctx, db, e.HappeningID, e.Details); err != nil {
		return err
	}
	var rows []struct {
		Org   uuid.UUID   `bun:"organization_id,type:uuid"`
		Feeds []uuid.UUID `bun:"feeds,array"`
	}
	err := db.NewRaw(`SELECT organization_id, array_agg(DISTINCT feed_id ORDER BY feed_id) AS feeds
		FROM org_log_happening_items WHERE happening_id = ? GROUP BY organization_id ORDER BY organization_id`, e.HappeningID).Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("find the feeds carrying calendar event %s: %w", e.HappeningID, err)
	}
	for _, r := range rows {
		if err := record(ctx, db, env, r.Org, r.Feeds, nil); err != nil {
			return err
		}
	}
	return nil
}

// logRow is one row of org_log.
type logRow struct {
	org       uuid.UUID
	commit    uint64
	prepare   uint64
	eventID   uuid.UUID
	eventType string
	feeds     []uuid.UUID
	at        time.Time
	data      []byte
}

// record adds the event of env to org's log with the feeds it is about;
// extra members are added to the event's stored JSON.
func record(ctx context.Context, db bun.IDB, env projections.Envelope, org uuid.UUID, feeds []uuid.UUID, extra map[string]json.RawMessage) error {
	data, err := domain.EncodeEvent(env.Event)
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("extend %s %s: %w", env.Event.EventType(), env.EventID, err)
		}
		for k, v := range extra {
			m[k] = v
		}
		if data, err = json.Marshal(m); err != nil {
			return fmt.Errorf("extend %s %s: %w", env.Event.EventType(), env.EventID, err)
		}
	}
	id, err := uuid.Parse(env.EventID)
	if err != nil {
		return fmt.Errorf("event id %q: %w", env.EventID, err)
	}
	if feeds == nil {
		feeds = []uuid.UUID{}
	}
	row := logRow{org: org, commit: env.Position.Commit, prepare: env.Position.Prepare, eventID: id,
		eventType: env.Event.EventType(), feeds: feeds, at: env.RecordedAt, data: data}
	if b, ok := projections.Deferred(ctx, logBatchKey{}, func() *logBatch { return &logBatch{} }); ok {
		b.rows = append(b.rows, row)
		return nil
	}
	b := &logBatch{rows: []logRow{row}}
	return b.Flush(ctx, db)
}

type logBatchKey struct{}

// logBatch is a batch's rows of org_log, written at its end.
type logBatch struct{ rows []logRow }

const insertLogSQL = `INSERT INTO org_log (organization_id, log_commit, log_prepare, event_id, event_type, schema_version, feed_ids, recorded_at, data)
	SELECT r.organization_id, r.log_commit, r.log_prepare, r.event_id, r.event_type, $9::integer,
		(SELECT coalesce(array_agg(f::uuid), '{}') FROM jsonb_array_elements_text(r.feeds::jsonb) AS f), r.recorded_at, r.data::jsonb
	FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::uuid[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
		AS r(organization_id, log_commit, log_prepare, event_id, event_type, feeds, recorded_at, data)`

func (b *logBatch) Flush(ctx context.Context, db bun.IDB) error {
	for rows := b.rows; len(rows) > 0; {
		chunk := rows[:min(len(rows), projections.MaxRowsPerInsert)]
		rows = rows[len(chunk):]
		n := len(chunk)
		orgs, ids := make([][16]byte, n), make([][16]byte, n)
		commits, prepares := make([]int64, n), make([]int64, n)
		types, feeds, data := make([]string, n), make([]string, n), make([]string, n)
		at := make([]time.Time, n)
		for i, r := range chunk {
			orgs[i], ids[i], commits[i], prepares[i], types[i], at[i], data[i] = r.org, r.eventID, int64(r.commit), int64(r.prepare), r.eventType, r.at, string(r.data)
			f, err := json.Marshal(r.feeds)
			if err != nil {
				return fmt.Errorf("encode feeds: %w", err)
			}
			feeds[i] = string(f)
		}
		if err := projections.ExecArraysUnlessConflict(ctx, db, insertLogSQL, insertLogSQL+" ON CONFLICT (organization_id, log_commit, log_prepare) DO NOTHING",
			orgs, commits, prepares, ids, types, feeds, at, data, domain.SchemaVersion); err != nil {
			return err
		}
	}
	return nil
}
