// Package migrations is the newsitems read model's schema (package newsitems):
// its tables, which its projector fills from the log.
//
// Its first file, 20261122000020_items, also makes other read models'
// first tables (articles and article_sources, the feedback tables, and the
// ingestion read model's ingest_attachments and ingest_feeds), because it
// did so when one file made every read model's tables and databases have
// it recorded whole; it stays here, with the items it mainly makes.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the read model in a list of owners for migrate.Run; its
// projector hands it to the service's schema (projections.Migrated).
var Owner = migrate.Owner{Name: "read model newsitems", Files: files}
