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

// dest is where a pgx Scan puts attachmentColumns.
func (a *Attachment) dest() []any {
	return []any{&a.AttachmentID, &a.FeedID, &a.FeedKind, &a.OrganizationID, &a.SourceID, &a.SourceType, &a.Details,
		&a.SourceEnabled, &a.FeedEnabled, &a.AttachedAt, &a.SourceEnabledAt, &a.FeedEnabledAt}
}

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

// distribute adds articles of a source to every feed of the source whose
// kind takes articles and that accepts them, each kind's together. The
// attachments are read afresh for each call, after the articles were
// recorded in crawl_seen: an attachment too new to be seen here is then
// guaranteed to see the articles in its backfill (see backfill.go). It
// returns how many items it added for each article.
func (w *Worker) distribute(ctx context.Context, sourceID uuid.UUID, articles []domain.ArticleDiscovered) ([]int, error) {
	atts, err := w.attachmentsOf(ctx, sourceID)
	if err != nil {
		return nil, err
	}
	offers := make([]ArticleOffer, 0, len(atts)*len(articles))
	of := make([]int, 0, cap(offers)) // the article of each offer
	for _, a := range atts {
		for i, article := range articles {
			offers = append(offers, ArticleOffer{To: a, Article: article})
			of = append(of, i)
		}
	}
	added := make([]int, len(articles))
	got, err := w.offerArticles(ctx, offers)
	now := time.Now()
	for i, ok := range got {
		if ok {
			added[of[i]]++
			observeAdded(publicationDelay, offers[i], now)
		}
	}
	return added, err
}

// offerArticles puts each offered article into its attachment's feed when
// the feed's kind takes articles and the attachment accepts it, the
// offers of one kind in one call of its intake; added says which offers
// put an article into a feed that did not have it yet. Crawls and
// backfills offer articles this one way.
func (w *Worker) offerArticles(ctx context.Context, offers []ArticleOffer) (added []bool, err error) {
	added = make([]bool, len(offers))
	byKind := map[domain.FeedKind][]int{}
	var kinds []domain.FeedKind
	for i, o := range offers {
		if _, ok := w.intakes.For(o.To.FeedKind); !ok {
			return added, fmt.Errorf("add article %s to feed %s: no intake for %s feeds", o.Article.NewsPageID, o.To.FeedID, o.To.FeedKind)
		}
		if _, ok := w.intakes.articles(o.To.FeedKind); !ok || !o.To.accepts(o.Article.EffectiveAt) {
			continue
		}
		if _, seen := byKind[o.To.FeedKind]; !seen {
			kinds = append(kinds, o.To.FeedKind)
		}
		byKind[o.To.FeedKind] = append(byKind[o.To.FeedKind], i)
	}
	for _, k := range kinds {
		in, _ := w.intakes.articles(k)
		mine := make([]ArticleOffer, len(byKind[k]))
		for j, i := range byKind[k] {
			mine[j] = offers[i]
		}
		got, err := in.AddArticles(ctx, mine)
		if err != nil {
			return added, fmt.Errorf("add %d articles to %s feeds: %w", len(mine), k, err)
		}
		for j, ok := range got {
			added[byKind[k][j]] = ok
		}
	}
	return added, nil
}
