// Package migrations is the idempotency keys' schema: each write's key,
// request fingerprint and stored answer.
package migrations

import (
	"embed"

	"github.com/feedsvc/feedsvc/internal/migrate"
)

//go:embed *.sql
var files embed.FS

// Owner is the idempotency store in a list of owners for migrate.Run.
var Owner = migrate.Owner{Name: "idempotency keys", Files: files}
