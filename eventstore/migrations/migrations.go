// Package migrations is the event store's schema: the log (events) and its
// identity (event_store), applied by internal/migrate in the service's
// list of owners, and alone by the store's own tests.
//
// Two files also make a table of another owner, because they did so when
// every file sat in one folder and databases have them recorded whole:
// 20261122000001_events makes projection_checkpoints (the projection
// engine's), and 20261126026100_event_store_identity makes
// webhook_delivered_through (the webhook dispatcher's, set by an import of
// the log). Each stays with the event store, whose tables it mainly makes.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the event store in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "event store", Files: files}
