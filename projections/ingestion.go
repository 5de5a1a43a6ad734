package projections

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Ingestion projects what the crawler needs to know about attachments:
// which source records to crawl for which feeds of which kind, and the
// facts domain.AcceptingSince decides from (the attach time and the latest
// re-enables of the source and the feed).
type Ingestion struct{}

func (Ingestion) Name() string     { return "ingestion" }
func (Ingestion) Tables() []string { return []string{"ingest_feeds", "ingest_attachments"} }
func (Ingestion) EventTypes() []string {
	return []string{
		domain.NewsFeedCreated{}.EventType(),
		domain.NewsSourceAttached{}.EventType(), domain.NewsSourceEnabled{}.EventType(),
		domain.NewsSourceDisabled{}.EventType(), domain.NewsSourceDetached{}.EventType(),
		domain.NewsFeedEnabled{}.EventType(), domain.NewsFeedDisabled{}.EventType(), domain.NewsFeedDeleted{}.EventType(),
	}
}

func (Ingestion) Project(ctx context.Context, db bun.IDB, env Envelope) error {
	switch e := env.Event.(type) {
	case domain.NewsFeedCreated:
		return exec(db.NewRaw(`INSERT INTO ingest_feeds (feed_id, enabled) VALUES (?, true) ON CONFLICT DO NOTHING`, e.FeedID).Exec(ctx))
	case domain.NewsSourceAttached:
		feedEnabled := `coalesce((SELECT enabled FROM ingest_feeds WHERE feed_id = ?), true)`
		return exec(db.NewRaw(`INSERT INTO ingest_attachments (attachment_id, feed_id, feed_kind, organization_id, source_id, source_type, details,
			source_enabled, feed_enabled, attached_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, true, `+feedEnabled+`, ?) ON CONFLICT (attachment_id) DO NOTHING`,
			e.AttachmentID, e.FeedID, string(domain.FeedNews), e.OrganizationID, e.SourceID, string(e.SourceType), e.Details,
			e.FeedID, e.At).Exec(ctx))
	case domain.NewsSourceEnabled:
		// greatest() ignores the NULL of a first re-enable.
		return exec(db.NewRaw(`UPDATE ingest_attachments SET source_enabled = true, source_enabled_at = greatest(source_enabled_at, ?)
			WHERE attachment_id = ?`, e.At, e.AttachmentID).Exec(ctx))
	case domain.NewsSourceDisabled:
		return exec(db.NewRaw(`UPDATE ingest_attachments SET source_enabled = false WHERE attachment_id = ?`, e.AttachmentID).Exec(ctx))
	case domain.NewsSourceDetached:
		return exec(db.NewRaw(`DELETE FROM ingest_attachments WHERE attachment_id = ?`, e.AttachmentID).Exec(ctx))
	case domain.NewsFeedEnabled:
		if err := exec(db.NewRaw(`UPDATE ingest_feeds SET enabled = true WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
			return err
		}
		return exec(db.NewRaw(`UPDATE ingest_attachments SET feed_enabled = true, feed_enabled_at = greatest(feed_enabled_at, ?)
			WHERE feed_id = ?`, e.At, e.FeedID).Exec(ctx))
	case domain.NewsFeedDisabled:
		if err := exec(db.NewRaw(`UPDATE ingest_feeds SET enabled = false WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
			return err
		}
		return exec(db.NewRaw(`UPDATE ingest_attachments SET feed_enabled = false WHERE feed_id = ?`, e.FeedID).Exec(ctx))
	case domain.NewsFeedDeleted:
		if err := exec(db.NewRaw(`DELETE FROM ingest_feeds WHERE feed_id = ?`, e.FeedID).Exec(ctx)); err != nil {
			return err
		}
		return exec(db.NewRaw(`DELETE FROM ingest_attachments WHERE feed_id = ?`, e.FeedID).Exec(ctx))
	}
	return nil
}
