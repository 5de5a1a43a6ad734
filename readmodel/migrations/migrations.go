// Package migrations is the read models' schema: feeds and sources, news
// items, articles, event items, feedback, insights, negative sources, and
// the ingestion read model. The other owners (event store, auth,
// idempotency keys, projection engine, ingest, webhook, the queue) embed
// their own files; internal/schema lists them all in the order they run.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the read models in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "read models", Files: files}
