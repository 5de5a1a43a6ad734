package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
)

// attachment is a row of the ingest_attachments projection: one feed that
// takes articles from a source record.
type attachment struct {
	AttachmentID   uuid.UUID `bun:"attachment_id"`
	FeedID         uuid.UUID `bun:"feed_id"`
	OrganizationID uuid.UUID `bun:"organization_id"`
	SourceID       uuid.UUID `bun:"source_id"`
	SourceType     string    `bun:"source_type"`
	Details        []byte    `bun:"details"`
	SourceEnabled  bool      `bun:"source_enabled"`
	FeedEnabled    bool      `bun:"feed_enabled"`
	ActiveSince    time.Time `bun:"active_since"`
}

func (a attachment) enabled() bool { return a.SourceEnabled && a.FeedEnabled }

// accepts is domain.Accepts for this attachment.
func (a attachment) accepts(effectiveAt time.Time) bool {
	return domain.Accepts(a.enabled(), a.ActiveSince, effectiveAt)
}

func (a attachment) details() (domain.SourceDetails, error) {
	var d domain.SourceDetails
	if err := json.Unmarshal(a.Details, &d); err != nil {
		return d, fmt.Errorf("decode details of source %s: %w", a.SourceID, err)
	}
	if d.SourceType == "" {
		d.SourceType = domain.SourceType(a.SourceType)
	}
	return d, nil
}

const attachmentColumns = `attachment_id, feed_id, organization_id, source_id, source_type, details,
	source_enabled, feed_enabled, active_since`

// attachmentsOf reads every attachment of a source, enabled or not.
func (w *Worker) attachmentsOf(ctx context.Context, sourceID uuid.UUID) ([]attachment, error) {
	var out []attachment
	err := w.db.NewRaw(`SELECT `+attachmentColumns+` FROM ingest_attachments WHERE source_id = ? ORDER BY attached_at`, sourceID).
		Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("read attachments of source %s: %w", sourceID, err)
	}
	return out, nil
}

// distribute adds an article to every feed of its source that accepts it.
// The attachments are read afresh for each article, after the article was
// recorded in crawl_seen: an attachment too new to be seen here is then
// guaranteed to see the article in its backfill (see backfill.go).
func (w *Worker) distribute(ctx context.Context, sourceID uuid.UUID, article domain.ArticleDiscovered) (int, error) {
	atts, err := w.attachmentsOf(ctx, sourceID)
	if err != nil {
		return 0, err
	}
	added := 0
	for _, a := range atts {
		if !a.accepts(article.EffectiveAt) {
			continue
		}
		ok, err := w.addItem(ctx, a, article)
		if err != nil {
			return added, err
		}
		if ok {
			added++
		}
	}
	return added, nil
}

// addItem puts an article into an attachment's feed; false when the feed
// already had it (AddNewsItem is idempotent per feed and article).
func (w *Worker) addItem(ctx context.Context, a attachment, article domain.ArticleDiscovered) (bool, error) {
	added, _, err := w.cmds.AddNewsItem(ctx, commands.AddNewsItem{
		FeedID: a.FeedID, OrganizationID: a.OrganizationID, AttachmentID: a.AttachmentID,
		SourceID: a.SourceID, SourceType: domain.SourceType(a.SourceType), Article: article,
	})
	return added, err
}
