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

// CopiesOf finds, for each article, the item of the feed that it is a
// copy of (commands.CopyFinder), with one statement for them all: the
// feed's articles at one of their normal addresses, or sharing a band of
// one's signature and within domain.CopyWindow of the batch, each
// compared with nearcopy.Compare to the articles it may be a copy of; the
// likeliest copy wins. found[i] is false when none is a copy of article
// i, or the feed holds article i itself.
func (q *Queries) CopiesOf(ctx context.Context, feedID uuid.UUID, as []domain.ArticleDiscovered) ([]domain.CopyMatch, []bool, error) {
	matches, found := make([]domain.CopyMatch, len(as)), make([]bool, len(as))
	if len(as) == 0 {
		return matches, found, nil
	}
	pages := make([]nearcopy.Page, len(as))
	addresses := make([]string, len(as))
	ids := make([]uuid.UUID, len(as))
	bands := make([][]int64, len(as))
	allBands := []int64{}
	from, until := as[0].EffectiveAt, as[0].EffectiveAt
	for i, a := range as {
		// Normalized once: each is compared with every banded row.
		pages[i], ids[i] = a.Content.Page().Normalized(), a.NewsPageID
		addresses[i] = pages[i].Normal
		bands[i] = pages[i].Signature.Bands(feedID[:])
		allBands = append(allBands, bands[i]...)
		from, until = minTime(from, a.EffectiveAt), maxTime(until, a.EffectiveAt)
	}
	var rows []struct {
		NewsPageID     uuid.UUID `bun:"news_page_id,type:uuid"`
		ItemNewsPageID uuid.UUID `bun:"item_news_page_id,type:uuid"`
		Address        string    `bun:"address"`
		Title          string    `bun:"title"`
		Signature      string    `bun:"signature"`
		EffectiveAt    time.Time `bun:"effective_at"`
		Banded         bool      `bun:"banded"`
	}
	// Three branches, each on its own index: the primary key, the
	// addresses, and the bands (a band names its feed: it is hashed with
	// it; the feed is checked all the same). The banded pages are listed
	// once (an ARRAY of the subquery, an InitPlan) and read by the primary
	// key: written as IN (subquery), a planner without statistics on the
	// tables (fresh ones, autovacuum off) joined the feed's index rows to
	// the subquery's result in a nested loop, 3.8 s for a batch of 32 at
	// 800 items of a site whose pages all share bands (132 ms this way).
	err := q.db.NewRaw(`SELECT news_page_id, item_news_page_id, address, title, signature, effective_at, false AS banded FROM news_copy_index
		WHERE feed_id = ?0 AND news_page_id = ANY(?1)
		UNION ALL
		SELECT news_page_id, item_news_page_id, address, title, signature, effective_at, false FROM news_copy_index
		WHERE feed_id = ?0 AND address = ANY(?2)
		UNION ALL
		(SELECT i.news_page_id, i.item_news_page_id, i.address, i.title, i.signature, i.effective_at, true FROM news_copy_index AS i
		WHERE i.feed_id = ?0 AND i.effective_at BETWEEN ?4 AND ?5 AND i.news_page_id = ANY(ARRAY(
			SELECT DISTINCT b.news_page_id FROM news_copy_bands AS b WHERE b.band = ANY(?3) AND b.feed_id = ?0))
		LIMIT ?6)`,
		feedID, pgdialect.Array(ids), pgdialect.Array(addresses), pgdialect.Array(allBands),
		from.Add(-domain.CopyWindow), until.Add(domain.CopyWindow), maxCandidates*len(as)).Scan(ctx, &rows)
	if err != nil {
		return nil, nil, fmt.Errorf("find copies of %d articles in feed %s: %w", len(as), feedID, err)
	}
	own := make([]bool, len(as))
	for _, r := range rows {
		var other *nearcopy.Page
		for i, a := range as {
			if own[i] {
				continue
			}
			if r.NewsPageID == a.NewsPageID {
				own[i], found[i] = true, false
				continue
			}
			if r.Address != addresses[i] && !r.Banded {
				continue
			}
			if d := a.EffectiveAt.Sub(r.EffectiveAt); r.Address != addresses[i] && (d > domain.CopyWindow || d < -domain.CopyWindow) {
				continue
			}
			if other == nil {
				p := nearcopy.Page{URL: "https://" + r.Address, Title: r.Title}
				p = p.Normalized()
				if r.Signature != "" {
					sig, err := nearcopy.ParseSignature(r.Signature)
					if err != nil {
						return nil, nil, fmt.Errorf("signature of %s in feed %s: %w", r.NewsPageID, feedID, err)
					}
					p.Signature = sig
				}
				other = &p
			}
			if v := nearcopy.Compare(*other, pages[i]); v.Copy && (!found[i] || v.Similarity > matches[i].Verdict.Similarity) {
				matches[i], found[i] = domain.CopyMatch{NewsPageID: r.ItemNewsPageID, Verdict: v}, true
			}
		}
	}
	return matches, found, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
