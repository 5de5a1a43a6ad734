package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// Attachment is a row of the ingest_attachments projection: one feed that
// takes items from a source record.
type Attachment struct {
	AttachmentID   uuid.UUID         `bun:"attachment_id"`
	FeedID         uuid.UUID         `bun:"feed_id"`
	FeedKind       domain.FeedKind   `bun:"feed_kind"`
	OrganizationID uuid.UUID         `bun:"organization_id"`
	SourceID       uuid.UUID         `bun:"source_id"`
	SourceType     domain.SourceType `bun:"source_type"`
	Details        []byte            `bun:"details"`
	SourceEnabled  bool              `bun:"source_enabled"`
	FeedEnabled    bool              `bun:"feed_enabled"`
	AttachedAt     time.Time         `bun:"attached_at"`
	// SourceEnabledAt and FeedEnabledAt are the latest re-enables of the
	// attachment and of its feed, nil when none.
	SourceEnabledAt *time.Time `bun:"source_enabled_at"`
	FeedEnabledAt   *time.Time `bun:"feed_enabled_at"`
}

// Target is where an item of this attachment goes: its feed, and the
// attachment and source that brought it.
func (a Attachment) Target() domain.ItemTarget {
	return domain.ItemTarget{
		FeedID: a.FeedID, OrganizationID: a.OrganizationID, AttachmentID: a.AttachmentID,
		SourceID: a.SourceID, SourceType: a.SourceType,
	}
}

func (a Attachment) enabled() bool { return a.SourceEnabled && a.FeedEnabled }

// acceptingSince is domain.AcceptingSince for this attachment.
func (a Attachment) acceptingSince() time.Time {
	return domain.AcceptingSince(a.AttachedAt, orZero(a.SourceEnabledAt), orZero(a.FeedEnabledAt))
}

// accepts is domain.Accepts for this attachment.
func (a Attachment) accepts(effectiveAt time.Time) bool {
	return domain.Accepts(a.enabled(), a.acceptingSince(), effectiveAt)
}

func (a Attachment) details() (domain.SourceDetails, error) {
	var d domain.SourceDetails
	if err := json.Unmarshal(a.Details, &d); err != nil {
		return d, fmt.Errorf("decode details of source %s: %w", a.SourceID, err)
	}
	if d.SourceType == "" {
		d.SourceType = a.SourceType
	}
	return d, nil
}

func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

const attachmentColumns = `a.attachment_id, a.feed_id, a.feed_kind, a.organization_id, a.source_id, a.source_type, a.details,
	a.source_enabled, a.feed_enabled, a.attached_at, a.source_enabled_at, a.feed_enabled_at`

// attachmentsOf reads every attachment of a source, enabled or not.
func (w *Worker) attachmentsOf(ctx context.Context, sourceID uuid.UUID) ([]Attachment, error) {
	var out []Attachment
	err := w.db.NewRaw(`SELECT `+attachmentColumns+` FROM ingest_attachments a WHERE a.source_id = ? ORDER BY a.attached_at`, sourceID).
		Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("read attachments of source %s: %w", sourceID, err)
	}
	return out, nil
}

// distribute adds an article to every feed of its source whose kind takes
// articles and that accepts it. The attachments are read afresh for each
// article, after the article was recorded in crawl_seen: an attachment too
// new to be seen here is then guaranteed to see the article in its
// backfill (see backfill.go).
func (w *Worker) distribute(ctx context.Context, sourceID uuid.UUID, article domain.ArticleDiscovered) (int, error) {
	atts, err := w.attachmentsOf(ctx, sourceID)
	if err != nil {
		return 0, err
	}
	added := 0
	for _, a := range atts {
		n, err := w.offerArticle(ctx, a, article)
		added += n
		if err != nil {
			return added, err
		}
	}
	return added, nil
}

// offerArticle puts an article into an attachment's feed when the feed's
// kind takes articles and the attachment accepts it; it returns 1 when
// the feed did not have it yet. Crawls and backfills offer articles this
// one way.
func (w *Worker) offerArticle(ctx context.Context, a Attachment, article domain.ArticleDiscovered) (int, error) {
	if _, ok := w.intakes.For(a.FeedKind); !ok {
		return 0, fmt.Errorf("add article %s to feed %s: no intake for %s feeds", article.NewsPageID, a.FeedID, a.FeedKind)
	}
	in, ok := w.intakes.articles(a.FeedKind)
	if !ok || !a.accepts(article.EffectiveAt) {
		return 0, nil
	}
	added, err := in.AddArticle(ctx, a, article)
	if err != nil {
		return 0, fmt.Errorf("add article %s to feed %s: %w", article.NewsPageID, a.FeedID, err)
	}
	if added {
		return 1, nil
	}
	return 0, nil
}
