package copies

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// Queries answers reads of the copies read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the copies' query side over db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// maxCandidates bounds the articles of a feed compared with a new one.
const maxCandidates = 50

// CopyOf finds the item of the feed that a is a copy of (commands.CopyFinder):
// the feed's articles at a's normal address, or sharing a band of its
// signature and within domain.CopyWindow of it, compared with
// nearcopy.Compare; the likeliest copy wins. ok is false when none is a
// copy, or when the feed holds a itself.
func (q *Queries) CopyOf(ctx context.Context, feedID uuid.UUID, a domain.ArticleDiscovered) (domain.CopyMatch, bool, error) {
	var rows []struct {
		NewsPageID     uuid.UUID `bun:"news_page_id,type:uuid"`
		ItemNewsPageID uuid.UUID `bun:"item_news_page_id,type:uuid"`
		Address        string    `bun:"address"`
		Title          string    `bun:"title"`
		Signature      string    `bun:"signature"`
	}
	page := a.Content.Page()
	bands := page.Signature.Bands(feedID[:])
	if bands == nil {
		bands = []int64{}
	}
	err := q.db.NewRaw(`SELECT news_page_id, item_news_page_id, address, title, signature FROM news_copy_index
		WHERE feed_id = ?0 AND (news_page_id = ?1 OR address = ?2)
		UNION ALL
		(SELECT news_page_id, item_news_page_id, address, title, signature FROM news_copy_index
		WHERE bands && ?3 AND feed_id = ?0 AND effective_at BETWEEN ?4 AND ?5 LIMIT ?6)`,
		feedID, a.NewsPageID, nearcopy.NormalAddress(a.Content.URL), pgdialect.Array(bands),
		a.EffectiveAt.Add(-domain.CopyWindow), a.EffectiveAt.Add(domain.CopyWindow), maxCandidates).Scan(ctx, &rows)
	if err != nil {
		return domain.CopyMatch{}, false, fmt.Errorf("find copies of %s in feed %s: %w", a.Content.URL, feedID, err)
	}
	var best domain.CopyMatch
	found := false
	for _, r := range rows {
		if r.NewsPageID == a.NewsPageID {
			return domain.CopyMatch{}, false, nil
		}
		other := nearcopy.Page{URL: "https://" + r.Address, Title: r.Title}
		if r.Signature != "" {
			sig, err := nearcopy.ParseSignature(r.Signature)
			if err != nil {
				return domain.CopyMatch{}, false, fmt.Errorf("signature of %s in feed %s: %w", r.NewsPageID, feedID, err)
			}
			other.Signature = sig
		}
		if v := nearcopy.Compare(other, page); v.Copy && (!found || v.Similarity > best.Verdict.Similarity) {
			best, found = domain.CopyMatch{NewsPageID: r.ItemNewsPageID, Verdict: v}, true
		}
	}
	return best, found, nil
}

// Copy is one copy of an item: an article found through an attachment of
// the feed, at its own address, and what decided it is a copy.
type Copy struct {
	NewsPageID   uuid.UUID `bun:"news_page_id,type:uuid"`
	AttachmentID uuid.UUID `bun:"attachment_id,type:uuid"`
	SourceID     uuid.UUID `bun:"source_id,type:uuid"`
	SourceType   string    `bun:"source_type"`
	URL          string    `bun:"url"`
	Title        string    `bun:"title"`
	DecidedBy    string    `bun:"decided_by"`
	Similarity   float64   `bun:"similarity"`
	FoundAt      time.Time `bun:"found_at"`
}

// Copies lists the copies of an item of a feed of the organization, in
// the order they were found. The caller checks the item is the
// organization's to see.
func (q *Queries) Copies(ctx context.Context, org, feedID, itemID uuid.UUID) ([]Copy, error) {
	out := []Copy{}
	err := q.db.NewRaw(`SELECT news_page_id, attachment_id, source_id, source_type, url, title, decided_by, similarity, found_at
		FROM news_item_copies WHERE item_id = ? AND feed_id = ? AND organization_id = ? ORDER BY found_at, news_page_id`,
		itemID, feedID, org).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("copies of item %s: %w", itemID, err)
	}
	return out, nil
}

// EventCopy is one happening an event item holds as another source lists
// it.
type EventCopy struct {
	CopyEventID  uuid.UUID `bun:"copy_event_id,type:uuid"`
	AttachmentID uuid.UUID `bun:"attachment_id,type:uuid"`
	SourceID     uuid.UUID `bun:"source_id,type:uuid"`
	SourceType   string    `bun:"source_type"`
	URL          string    `bun:"url"`
	Title        string    `bun:"title"`
	FoundAt      time.Time `bun:"found_at"`
}

// EventCopies lists the copies of an event item of a feed of the
// organization, in the order they were found.
func (q *Queries) EventCopies(ctx context.Context, org, feedID, itemID uuid.UUID) ([]EventCopy, error) {
	out := []EventCopy{}
	err := q.db.NewRaw(`SELECT copy_event_id, attachment_id, source_id, source_type, url, title, found_at
		FROM event_item_copies WHERE item_id = ? AND feed_id = ? AND organization_id = ? ORDER BY found_at, copy_event_id`,
		itemID, feedID, org).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("copies of event item %s: %w", itemID, err)
	}
	return out, nil
}
