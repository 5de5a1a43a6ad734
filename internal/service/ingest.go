package service

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/connector"
	"github.com/feedsvc/feedsvc/connector/web"
	"github.com/feedsvc/feedsvc/crawl"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest"
)

// NewIngestWorker wires an ingestion worker to the service's database and
// commands: every connector, reading websites through client, and an item
// writer per feed kind. The service runs one built with the configured
// client; tests build their own with other clients and schedules.
func (s *Service) NewIngestWorker(client *crawl.Client, cfg ingest.Config) (*ingest.Worker, error) {
	connectors, err := connector.NewRegistry(
		web.New(client, web.Options{}, s.logger),
	)
	if err != nil {
		return nil, err
	}
	return ingest.New(ingest.Parts{
		DB:         s.DB.Bun,
		Connectors: connectors,
		Articles:   articles{s.Commands},
		Items: map[domain.FeedKind]ingest.ItemWriter{
			domain.FeedNews: newsItems{s.Commands},
		},
	}, cfg, s.logger), nil
}

// articles records what crawls find as articles.
type articles struct{ cmds *commands.Handler }

func (a articles) RecordArticle(ctx context.Context, sourceID uuid.UUID, content domain.ArticleContent, lastMod *time.Time) (
	domain.ArticleDiscovered, bool, error) {
	d, _, err := a.cmds.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: sourceID, Content: content, LastMod: lastMod})
	return d.ArticleDiscovered, d.New, err
}

// newsItems writes the items of news feeds.
type newsItems struct{ cmds *commands.Handler }

func (n newsItems) AddItem(ctx context.Context, to ingest.Attachment, article domain.ArticleDiscovered) (bool, error) {
	added, _, err := n.cmds.AddNewsItem(ctx, commands.AddNewsItem{
		FeedID: to.FeedID, OrganizationID: to.OrganizationID, AttachmentID: to.AttachmentID,
		SourceID: to.SourceID, SourceType: to.SourceType, Article: article,
	})
	return added, err
}
