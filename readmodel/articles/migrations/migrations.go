// Package migrations is the articles read model's schema (package
// articles): its tables, which its projector fills from the log. Its
// first tables, articles and article_sources, were made by the newsitems
// read model's first file (see that package); what came after is here.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the read model in a list of owners for migrate.Run; its
// projector hands it to the service's schema (projections.Migrated).
var Owner = migrate.Owner{Name: "read model articles", Files: files}
