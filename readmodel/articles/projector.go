// Package articles owns the articles read model: the shared articles and
// which source records found them (tables articles and article_sources),
// which the crawler backfills a new attachment from. No API answer reads
// it, so writes do not wait for it (projections.Unwaited).
package articles

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/migrate"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/articles/migrations"
)

// Projector projects the shared articles and which source records found
// them; the crawler backfills a new attachment from it.
type Projector struct{}

func (Projector) Name() string { return "articles" }

// Version 2 keeps each article's near-copy signature.
func (Projector) Version() int     { return 2 }
func (Projector) Tables() []string { return []string{"articles", "article_sources"} }

func (Projector) Migrations() migrate.Owner { return migrations.Owner }

// Unwaited: articles are written by the crawler alone and read by it and
// by item writers, never by an API answer.
func (Projector) Unwaited() string { return "written only by the crawler" }
func (Projector) Handlers() []projections.Handler {
	return []projections.Handler{
		projections.On(func(ctx context.Context, db bun.IDB, e domain.ArticleDiscovered) error {
			c := e.Content
			var signature *string
			if c.Signature != nil {
				s := c.Signature.String()
				signature = &s
			}
			if err := projections.Exec(db.NewRaw(`INSERT INTO articles (id, url, title, description, image_url, published_at, effective_at, version_id, discovered_at, language, signature)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
				e.NewsPageID, c.URL, c.Title, c.Description, c.ImageURL, c.PublishedAt, e.EffectiveAt, e.VersionID, e.At, c.Language, signature).Exec(ctx)); err != nil {
				return err
			}
			return projections.Exec(db.NewRaw(`INSERT INTO article_sources (source_id, article_id, effective_at) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, e.SourceID, e.NewsPageID, e.EffectiveAt).Exec(ctx))
		}),
		projections.On(func(ctx context.Context, db bun.IDB, e domain.ArticleFoundOnSource) error {
			return projections.Exec(db.NewRaw(`INSERT INTO article_sources (source_id, article_id, effective_at)
				SELECT ?, id, effective_at FROM articles WHERE id = ? ON CONFLICT DO NOTHING`, e.SourceID, e.NewsPageID).Exec(ctx))
		}),
	}
}
