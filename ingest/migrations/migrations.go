// Package migrations is the crawler's schema: its operational state
// (crawl_state, crawl_seen, crawl_failures, crawl_listings, backfills, the
// happenings each source found and which document holds each), which
// nothing rebuilds from the log. Tables keep the names they were made with
// (ingest_source_events, ingest_event_documents, ingest_event_holders):
// their "event" is the happening the Go code names. The ingestion read model (ingest_attachments,
// ingest_feeds) is its projector's, in ingest/attachments: its tables were
// first made by readmodel/newsitems' 20261122000020_items, when one file
// made every read model's tables.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the crawler in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "ingest", Files: files}
