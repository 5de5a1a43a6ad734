// Package migrations is auth's schema: organizations, API keys, and each
// key's request rate with the shared rate-limit windows.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is auth in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "auth", Files: files}
