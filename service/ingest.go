package service

import (
	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/connector/web"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/ingest/intake"
	"github.com/feedsvc/feedsvc/ingest/websub"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
)

// NewIngestWorker wires an ingestion worker to the service's database and
// commands: every connector (websites read through client, platform
// accounts through the service's providers), the intake of every feed kind
// (package ingest/intake), and which sources a WebSub hub pushes. The service runs one built with the configured
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
		Commands:      s.Commands,
		Pushed:        websub.PushedCondition,
		Intakes:       intakes,
		Notifications: notifications,
	}, cfg, s.logger), nil
}
