package articles

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

// Article is a row of the articles read model.
type Article struct {
	ID           uuid.UUID  `bun:"id"`
	URL          string     `bun:"url"`
	Title        string     `bun:"title"`
	Description  string     `bun:"description"`
	ImageURL     string     `bun:"image_url"`
	PublishedAt  *time.Time `bun:"published_at"`
	EffectiveAt  time.Time  `bun:"effective_at"`
	VersionID    uuid.UUID  `bun:"version_id"`
	DiscoveredAt time.Time  `bun:"discovered_at"`
	Language     string     `bun:"language"`
	Signature    *string    `bun:"signature"`
}

// Discovery rebuilds the article's discovery through a source, as the
// crawler's intakes take it.
func (r Article) Discovery(sourceID uuid.UUID) domain.ArticleDiscovered {
	var published *time.Time
	if r.PublishedAt != nil {
		t := r.PublishedAt.UTC()
		published = &t
	}
	d := domain.ArticleDiscovered{
		NewsPageID: r.ID, VersionID: r.VersionID, SourceID: sourceID,
		Content: domain.ArticleContent{
			URL: r.URL, Title: r.Title, Description: r.Description, ImageURL: r.ImageURL, PublishedAt: published,
			Language: r.Language,
		},
		EffectiveAt: r.EffectiveAt.UTC(), At: r.DiscoveredAt.UTC(),
	}
	// The signature lets a backfill's copy check compare the article's
	// text, as a crawl's does. One the projector wrote is always
	// readable; were it not, the article would be compared by address
	// only, as one without text is.
	if r.Signature != nil {
		if sig, err := nearcopy.ParseSignature(*r.Signature); err == nil {
			d.Content.Signature = &sig
		}
	}
	return d
}

// Queries read the articles read model.
type Queries struct{ db bun.IDB }

// NewQueries returns the queries of the articles read model in db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// OfSource reads the articles a source found that take effect at since or
// later, and the articles ids whatever their source (those the crawler
// knows it found, which article_sources may not hold yet), oldest first:
// what a backfill offers a new attachment of the source.
func (q *Queries) OfSource(ctx context.Context, sourceID uuid.UUID, since time.Time, ids []uuid.UUID) ([]Article, error) {
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = id.String()
	}
	var rows []Article
	err := q.db.NewRaw(`SELECT id, url, title, description, image_url, published_at, effective_at, version_id, discovered_at, language, signature
		FROM articles
		WHERE id IN (SELECT article_id FROM article_sources WHERE source_id = ? AND effective_at >= ?
		             UNION SELECT unnest(?::uuid[]))
		ORDER BY effective_at, id`, sourceID, since, pgdialect.Array(strs)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read articles of source %s: %w", sourceID, err)
	}
	return rows, nil
}
