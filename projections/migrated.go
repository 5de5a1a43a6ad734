package projections

import "github.com/feedsvc/feedsvc/internal/migrate"

// Migrated is implemented by a projector whose read model ships the
// migrations of its tables: the Owner of the package migrations in its
// folder, as every owner of tables ships its own (see internal/migrate).
// The service's schema takes them from every registered projector, so a
// new read model's tables come with its folder and no list of owners
// names them.
type Migrated interface {
	Projector
	Migrations() migrate.Owner
}
