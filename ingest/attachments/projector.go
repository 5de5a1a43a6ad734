// Package attachments owns the crawler's view of attachments: which
// source records to crawl for which feeds of every kind, and the facts
// domain.AcceptingSince decides from (tables ingest_feeds and
// ingest_attachments): its projector, row type (Attachment) and queries
// live here, as every read model's do; package ingest reads them.
package attachments

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/attachments/migrations"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
)

// CrawlableChannel is the Postgres notification channel on which the
// projector tells crawlers that an attachment became crawlable (attached
// with its feed enabled, or its source or feed re-enabled): its source
// may be new to crawl and its backfill is to run (package ingest looks
// for both when told, not every tick). The notification is sent in the
// projector's transaction, so the row is visible when it arrives; its
// payload is empty, so that Postgres sends one per transaction however
// many attachments it changed.
const CrawlableChannel = "feedsvc_crawlable"

// notifyCrawlable wraps a statement that returns, for each row it wrote,
// whether the row is crawlable now (a boolean column crawlable) so that,
// when one is, the transaction notifies
// CrawlableChannel: in the same statement, so that a change costs no
// round trip more, and only a transaction that changed something takes
// the commit-time lock notifying transactions share (see
// eventstore.announce).
func notifyCrawlable(stmt string) string {
	return `WITH changed AS (` + stmt + `)
		SELECT pg_notify('` + CrawlableChannel + `', '') FROM (SELECT 1 FROM changed WHERE crawlable LIMIT 1) c`
}

// Projector projects what the crawler needs to know about attachments of
// feeds of every kind: which source records to crawl for which feeds, and
// the facts domain.AcceptingSince decides from (the attach time and the
// latest re-enables of the source and the feed).
type Projector struct{}

func (Projector) Name() string     { return "ingestion" }
func (Projector) Version() int     { return 1 }
func (Projector) Tables() []string { return []string{"ingest_feeds", "ingest_attachments"} }

// Migrations are its tables' migrations, in the package migrations
// beside it; the service's schema applies them with every other owner's.
func (Projector) Migrations() migrate.Owner { return migrations.Owner }

func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedCreated) error {
			return projections.Exec(db.NewRaw(`INSERT INTO ingest_feeds (feed_id, enabled) VALUES (?, true) ON CONFLICT DO NOTHING`, e.FeedID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceAttached) error {
			feedEnabled := `coalesce((SELECT enabled FROM ingest_feeds WHERE feed_id = ?), true)`
			feedRules := `(SELECT rules FROM ingest_feeds WHERE feed_id = ?)`
			return projections.Exec(db.NewRaw(notifyCrawlable(`INSERT INTO ingest_attachments (attachment_id, feed_id, feed_kind, organization_id, source_id, source_type, details,
				source_enabled, feed_enabled, attached_at, feed_rules)
				VALUES (?, ?, ?, ?, ?, ?, ?, true, `+feedEnabled+`, ?, `+feedRules+`) ON CONFLICT (attachment_id) DO NOTHING
				RETURNING feed_enabled AS crawlable`),
				e.AttachmentID, e.FeedID, string(e.Kind), e.OrganizationID, e.SourceID, string(e.SourceType), e.Details,
				e.FeedID, e.At, e.FeedID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceEnabled) error {
			// greatest() ignores the NULL of a first re-enable.
			return projections.Exec(db.NewRaw(notifyCrawlable(`UPDATE ingest_attachments SET source_enabled = true, source_enabled_at = greatest(source_enabled_at, ?)
				WHERE attachment_id = ? RETURNING feed_enabled AS crawlable`), e.At, e.AttachmentID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceDisabled) error {
			return projections.Exec(db.NewRaw(`UPDATE ingest_attachments SET source_enabled = false WHERE attachment_id = ?`, e.AttachmentID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.SourceDetached) error {
			return projections.Exec(db.NewRaw(`DELETE FROM ingest_attachments WHERE attachment_id = ?`, e.AttachmentID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedEnabled) error {
			if err := projections.Exec(db.NewRaw(`UPDATE ingest_feeds SET enabled = true WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return projections.Exec(db.NewRaw(notifyCrawlable(`UPDATE ingest_attachments SET feed_enabled = true, feed_enabled_at = greatest(feed_enabled_at, ?)
				WHERE feed_id = ? RETURNING source_enabled AS crawlable`), e.At, e.FeedID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedDisabled) error {
			if err := projections.Exec(db.NewRaw(`UPDATE ingest_feeds SET enabled = false WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return projections.Exec(db.NewRaw(`UPDATE ingest_attachments SET feed_enabled = false WHERE feed_id = ?`, e.FeedID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedRulesChanged) error {
			var rules *string
			if !e.Rules.IsZero() {
				raw, err := json.Marshal(e.Rules)
				if err != nil {
					return fmt.Errorf("encode the rules of feed %s: %w", e.FeedID, err)
				}
				s := string(raw)
				rules = &s
			}
			if err := projections.Exec(db.NewRaw(`UPDATE ingest_feeds SET rules = ?::jsonb WHERE feed_id = ?`, rules, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return projections.Exec(db.NewRaw(`UPDATE ingest_attachments SET feed_rules = ?::jsonb WHERE feed_id = ?`, rules, e.FeedID).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			if err := projections.Exec(db.NewRaw(`DELETE FROM ingest_feeds WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return projections.Exec(db.NewRaw(`DELETE FROM ingest_attachments WHERE feed_id = ?`, e.FeedID).Exec(ctx))
		}),
	}
}
