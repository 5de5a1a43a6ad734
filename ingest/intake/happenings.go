package intake

import (
	"context"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest"
)

// Happenings is the intake of event feeds: they take happenings, each as
// one event item per feed (commands.AddHappeningItem), linked to every further
// attachment of the feed that finds it.
type Happenings struct{ Commands *commands.Handler }

// Intakes are found by type assertion at registration; this says at
// compile time that Happenings is one.
var _ ingest.HappeningIntake = Happenings{}

// FeedKind is events (domain.FeedHappenings).
func (Happenings) FeedKind() domain.FeedKind { return domain.FeedHappenings }

// AddHappening adds the happening to the attachment's event feed, or links the
// attachment to the feed's item of it; false when neither was new.
func (e Happenings) AddHappening(ctx context.Context, to ingest.Attachment, happeningID uuid.UUID) (bool, error) {
	_, res, err := e.Commands.AddHappeningItem(ctx, commands.AddHappeningItem{
		ItemTarget:  to.Target(),
		HappeningID: happeningID,
	})
	return !res.Empty(), err
}
