package projections

import "io/fs"

// Migrated is implemented by a projector whose package ships the
// migrations of its tables (NNNN_what.up.sql and .down.sql at the root of
// the returned files). The service's schema takes them from every
// registered projector, so a new read model's tables come with its folder
// and no list names them.
type Migrated interface {
	Projector
	Migrations() fs.FS
}
