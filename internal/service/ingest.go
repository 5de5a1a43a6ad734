package service

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/connector"
	"github.com/feedsvc/feedsvc/connector/web"
	"github.com/feedsvc/feedsvc/crawl"
	"github.com/feedsvc/feedsvc/document"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/extract/events"
	"github.com/feedsvc/feedsvc/ingest"
)

// NewIngestWorker wires an ingestion worker to the service's database and
// commands: every connector (websites read through client, platform
// accounts through the service's providers), and an item writer per feed
// kind. The service runs one built with the configured
// client; tests build their own with other clients and schedules.
func (s *Service) NewIngestWorker(client *crawl.Client, cfg ingest.Config) (*ingest.Worker, error) {
	connectors, err := connector.NewRegistry(
		web.New(client, web.Options{}, s.logger),
		s.Social,
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
		Events: eventSink{cmds: s.Commands, log: s.logger, limits: cfg.Documents},
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

// eventSink reads documents for events (extract/events) and records them
// and the items of event feeds through commands.
type eventSink struct {
	cmds   *commands.Handler
	log    *slog.Logger
	limits events.Limits
}

func (s eventSink) ReadEvents(doc document.Document) (ingest.ReadEvents, error) {
	found, err := events.Extract(doc, events.Options{Now: time.Now(), Limits: s.limits})
	if err != nil {
		return ingest.ReadEvents{}, fmt.Errorf("extract events of %s: %w", doc.URL, err)
	}
	if found.CutOff != nil {
		s.log.Warn("document cut off: what fitted is kept", "url", doc.URL, "bound", found.CutOff.Bound, "limit", found.CutOff.Limit, "events", len(found.Events))
	}
	if found.Dropped > 0 {
		s.log.Info("events without what an event needs were dropped", "url", doc.URL, "dropped", found.Dropped)
	}
	out := ingest.ReadEvents{Calendars: found.Calendars, Events: make([]ingest.ReadEvent, len(found.Events))}
	if found.CutOff != nil {
		out.CutOff = found.CutOff.String()
	}
	for i, d := range found.Events {
		out.Events[i] = ingest.ReadEvent{ID: domain.EventID(d.Identity), Details: d, Precedence: events.Precedence(doc, d)}
	}
	return out, nil
}

func (s eventSink) RecordEvent(ctx context.Context, sourceID uuid.UUID, e ingest.ReadEvent, deferred bool) (ingest.FoundEvent, error) {
	ev, _, err := s.cmds.DiscoverEvent(ctx, commands.DiscoverEvent{SourceID: sourceID, Details: e.Details, OnlyIfNew: deferred})
	if err != nil {
		return ingest.FoundEvent{}, err
	}
	return ingest.FoundEvent{ID: ev.EventID, ChangedAt: ev.At, LastEnd: ev.Details.LastEnd()}, nil
}

func (s eventSink) AddEventItem(ctx context.Context, to ingest.Attachment, eventID uuid.UUID) (bool, error) {
	_, res, err := s.cmds.AddEventItem(ctx, commands.AddEventItem{
		ItemTarget: domain.ItemTarget{
			FeedID: to.FeedID, OrganizationID: to.OrganizationID, AttachmentID: to.AttachmentID,
			SourceID: to.SourceID, SourceType: to.SourceType,
		},
		EventID: eventID,
	})
	return !res.Empty(), err
}
