// Package migrations is the WebSub subscriber's schema (package websub):
// its subscriptions and the pushes waiting to be ingested.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the WebSub subscriber in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "websub", Files: files}
