package negativesources

import (
	"embed"
	"io/fs"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the migrations of the read model's tables, applied with
// every other owner's by service/schema in timestamp order.
func (Projector) Migrations() fs.FS {
	sub, _ := fs.Sub(migrations, "migrations") // fails only on an invalid path; this one is constant
	return sub
}
