package projections

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Ingestion projects what the crawler needs to know about attachments of
// feeds of every kind: which source records to crawl for which feeds, and
// the facts domain.AcceptingSince decides from (the attach time and the
// latest re-enables of the source and the feed).
type Ingestion struct{}

func (Ingestion) Name() string     { return "ingestion" }
func (Ingestion) Version() int     { return 1 }
func (Ingestion) Tables() []string { return []string{"ingest_feeds", "ingest_attachments"} }

func (Ingestion) Handlers() []Handler {
	return []Handler{
		On(func(ctx context.Context, db bun.IDB, e domain.FeedCreated) error {
			return exec(db.NewRaw(`INSERT INTO ingest_feeds (feed_id, enabled) VALUES (?, true) ON CONFLICT DO NOTHING`, e.FeedID).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceAttached) error {
			feedEnabled := `coalesce((SELECT enabled FROM ingest_feeds WHERE feed_id = ?), true)`
			return exec(db.NewRaw(`INSERT INTO ingest_attachments (attachment_id, feed_id, feed_kind, organization_id, source_id, source_type, details,
				source_enabled, feed_enabled, attached_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, true, `+feedEnabled+`, ?) ON CONFLICT (attachment_id) DO NOTHING`,
				e.AttachmentID, e.FeedID, string(e.Kind), e.OrganizationID, e.SourceID, string(e.SourceType), e.Details,
				e.FeedID, e.At).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceEnabled) error {
			// greatest() ignores the NULL of a first re-enable.
			return exec(db.NewRaw(`UPDATE ingest_attachments SET source_enabled = true, source_enabled_at = greatest(source_enabled_at, ?)
				WHERE attachment_id = ?`, e.At, e.AttachmentID).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceDisabled) error {
			return exec(db.NewRaw(`UPDATE ingest_attachments SET source_enabled = false WHERE attachment_id = ?`, e.AttachmentID).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.SourceDetached) error {
			return exec(db.NewRaw(`DELETE FROM ingest_attachments WHERE attachment_id = ?`, e.AttachmentID).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedEnabled) error {
			if err := exec(db.NewRaw(`UPDATE ingest_feeds SET enabled = true WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return exec(db.NewRaw(`UPDATE ingest_attachments SET feed_enabled = true, feed_enabled_at = greatest(feed_enabled_at, ?)
				WHERE feed_id = ?`, e.At, e.FeedID).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedDisabled) error {
			if err := exec(db.NewRaw(`UPDATE ingest_feeds SET enabled = false WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return exec(db.NewRaw(`UPDATE ingest_attachments SET feed_enabled = false WHERE feed_id = ?`, e.FeedID).Exec(ctx))
		}),
		On(func(ctx context.Context, db bun.IDB, e domain.FeedDeleted) error {
			if err := exec(db.NewRaw(`DELETE FROM ingest_feeds WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
				return err
			}
			return exec(db.NewRaw(`DELETE FROM ingest_attachments WHERE feed_id = ?`, e.FeedID).Exec(ctx))
		}),
	}
}
