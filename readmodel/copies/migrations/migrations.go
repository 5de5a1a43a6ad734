// Package migrations is the copies read model's schema (package copies):
// its tables, which its projector fills from the log.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the read model in a list of owners for migrate.Run; its
// projector hands it to the service's schema (projections.Migrated).
var Owner = migrate.Owner{Name: "read model copies", Files: files}
