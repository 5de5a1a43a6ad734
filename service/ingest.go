package service

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/connector/web"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/intake"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
)

// NewIngestWorker wires an ingestion worker to the service's database and
// commands: every connector (websites read through client, platform
// accounts through the service's providers), the readers that record what
// documents hold (articles, events), and the intake of every feed kind
// (package ingest/intake). The service runs one built with the configured
// client and CrawlNotifications; tests build their own with other clients
// and schedules. notifications tells the worker of crawlable attachments
// (ingest.Parts.Notifications); without it the worker looks every tick.
func (s *Service) NewIngestWorker(client *crawl.Client, cfg ingest.Config, notifications *pgnotify.Listener) (*ingest.Worker, error) {
	connectors, err := connector.NewRegistry(
		web.New(client, web.Options{FeedsRead: s.WebSub.Record}, s.logger),
		s.Social,
	)
	if err != nil {
		return nil, err
	}
	intakes, err := ingest.NewIntakes(
		intake.News{Commands: s.Commands},
		intake.Happenings{Commands: s.Commands},
	)
	if err != nil {
		return nil, err
	}
	return ingest.New(ingest.Parts{
		DB:            s.DB.Bun,
		Pool:          s.DB.Pool,
		Connectors:    connectors,
		Articles:      articles{s.Commands},
		Happenings:    happeningReader{cmds: s.Commands, log: s.logger, limits: cfg.Documents},
		Intakes:       intakes,
		Notifications: notifications,
	}, cfg, s.logger), nil
}

// articles records what crawls find as articles.
type articles struct{ cmds *commands.Handler }

func (a articles) RecordArticles(ctx context.Context, found []ingest.FoundArticle) ([]ingest.RecordedArticle, error) {
	cs := make([]commands.DiscoverArticle, len(found))
	for i, f := range found {
		cs[i] = commands.DiscoverArticle{SourceID: f.SourceID, Content: f.Content, LastMod: f.LastMod}
	}
	ds, _, err := a.cmds.DiscoverArticles(ctx, cs)
	if err != nil {
		return nil, err
	}
	out := make([]ingest.RecordedArticle, len(ds))
	for i, d := range ds {
		out[i] = ingest.RecordedArticle{ArticleDiscovered: d.ArticleDiscovered, New: d.New}
	}
	return out, nil
}

// happeningReader reads documents for happenings (ingest/calendar) within the
// document bounds and records them through commands.
type happeningReader struct {
	cmds   *commands.Handler
	log    *slog.Logger
	limits calendar.Limits
}

func (s happeningReader) ReadHappenings(doc document.Document) (ingest.DocumentHappenings, error) {
	found, err := calendar.Extract(doc, calendar.Options{Now: time.Now(), Limits: s.limits})
	if err != nil {
		return ingest.DocumentHappenings{}, fmt.Errorf("extract events of %s: %w", doc.URL, err)
	}
	if found.CutOff != nil {
		s.log.Warn("document cut off: what fitted is kept", "url", doc.URL, "bound", found.CutOff.Bound, "limit", found.CutOff.Limit, "events", len(found.Happenings))
	}
	if found.Dropped > 0 {
		s.log.Info("events without what an event needs were dropped", "url", doc.URL, "dropped", found.Dropped)
	}
	out := ingest.DocumentHappenings{Calendars: found.Calendars, Happenings: make([]ingest.StatedHappening, len(found.Happenings))}
	if found.CutOff != nil {
		out.CutOff = found.CutOff.String()
	}
	for i, d := range found.Happenings {
		out.Happenings[i] = ingest.StatedHappening{ID: domain.HappeningID(d.Identity), Details: d, Precedence: calendar.Precedence(doc, d)}
	}
	return out, nil
}

func (s happeningReader) RecordHappening(ctx context.Context, sourceID uuid.UUID, e ingest.StatedHappening, deferred bool) (ingest.RecordedHappening, error) {
	ev, _, err := s.cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: sourceID, Details: e.Details, OnlyIfNew: deferred})
	if err != nil {
		return ingest.RecordedHappening{}, err
	}
	return ingest.RecordedHappening{ID: ev.HappeningID, ChangedAt: ev.At, LastEnd: ev.Details.LastEnd()}, nil
}
