// Package migrations is the projection engine's schema: the version each
// read model was built by, and the progress of rebuilds. Its checkpoints
// table, projection_checkpoints, is made by the event store's first file
// (eventstore/migrations), which made it before the engine had files.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the projection engine in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "projection engine", Files: files}
