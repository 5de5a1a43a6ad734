package intake

import (
	"context"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest"
)

// Events is the intake of event feeds: they take calendar events, each as
// one event item per feed (commands.AddEventItem), linked to every further
// attachment of the feed that finds it.
type Events struct{ Commands *commands.Handler }

// FeedKind is events.
func (Events) FeedKind() domain.FeedKind { return domain.FeedEvents }

// AddEvent adds the event to the attachment's event feed, or links the
// attachment to the feed's item of it; false when neither was new.
func (e Events) AddEvent(ctx context.Context, to ingest.Attachment, eventID uuid.UUID) (bool, error) {
	_, res, err := e.Commands.AddEventItem(ctx, commands.AddEventItem{
		ItemTarget: to.Target(),
		EventID:    eventID,
	})
	return !res.Empty(), err
}
