// Package projections turns the global event log into read models. Each
// projector is a Watermill handler fed by a Subscriber that reads the event
// store in batches; a batch's read-model writes and the projector's
// checkpoint commit in one transaction, so a crash or restart never applies
// an event twice or loses one.
package projections

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// Projector keeps one read model up to date.
type Projector interface {
	// Name identifies the projector: its checkpoint and its rebuild command.
	Name() string
	// Tables are the read-model tables it owns, recreated by a rebuild.
	Tables() []string
	// EventTypes are the events it reads; the others only move its
	// checkpoint. Read-after-write waits only for projectors that read
	// what a command wrote.
	EventTypes() []string
	// Project applies one event through db, the batch's transaction. It must
	// derive everything from the event (never the clock), so a rebuild gives
	// the same read model.
	Project(ctx context.Context, db bun.IDB, e Envelope) error
}

// Envelope is a decoded event with where it sits in the log.
type Envelope struct {
	Event      domain.Event
	EventID    string
	StreamID   string
	Revision   uint64
	Position   eventstore.Position
	RecordedAt time.Time
}
