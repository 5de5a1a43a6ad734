package projections

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
)

// Articles projects the shared articles and which source records found
// them; the crawler backfills a new attachment from it.
type Articles struct{}

func (Articles) Name() string     { return "articles" }
func (Articles) Tables() []string { return []string{"articles", "article_sources"} }
func (Articles) EventTypes() []string {
	return []string{domain.ArticleDiscovered{}.EventType(), domain.ArticleFoundOnSource{}.EventType()}
}

func (Articles) Project(ctx context.Context, db bun.IDB, env Envelope) error {
	switch e := env.Event.(type) {
	case domain.ArticleDiscovered:
		c := e.Content
		if err := exec(db.NewRaw(`INSERT INTO articles (id, url, title, description, image_url, published_at, effective_at, version_id, discovered_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			e.NewsPageID, c.URL, c.Title, c.Description, c.ImageURL, c.PublishedAt, e.EffectiveAt, e.VersionID, e.At).Exec(ctx)); err != nil {
			return err
		}
		return exec(db.NewRaw(`INSERT INTO article_sources (source_id, article_id, effective_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, e.SourceID, e.NewsPageID, e.EffectiveAt).Exec(ctx))
	case domain.ArticleFoundOnSource:
		return exec(db.NewRaw(`INSERT INTO article_sources (source_id, article_id, effective_at)
			SELECT ?, id, effective_at FROM articles WHERE id = ? ON CONFLICT DO NOTHING`, e.SourceID, e.NewsPageID).Exec(ctx))
	}
	return nil
}
