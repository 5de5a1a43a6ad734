package domain

import (
	"time"

	"github.com/google/uuid"
)

// EventItemStream is the stream of one event in one feed: the event is in
// a feed once, however many of its sources find it.
func EventItemStream(feedID, eventID uuid.UUID) string {
	return "eventitem-" + feedID.String() + "-" + eventID.String()
}

// EventItemID is the item id of an event in a feed. It is derived, so the
// item keeps its id (and its feedback) when the event leaves the feed with
// a detached source and comes back through another.
func EventItemID(feedID, eventID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(feedID, []byte("event:"+eventID.String()))
}

// EventItemAdded: an event entered an event feed through one of its
// attachments. It is what the event.item_added webhook announces.
type EventItemAdded struct {
	ItemID         uuid.UUID  `json:"itemId"`
	FeedID         uuid.UUID  `json:"feedId"`
	OrganizationID uuid.UUID  `json:"organizationId"`
	AttachmentID   uuid.UUID  `json:"attachmentId"`
	SourceID       uuid.UUID  `json:"sourceId"`
	SourceType     SourceType `json:"sourceType"`
	EventID        uuid.UUID  `json:"eventId"`
	At             time.Time  `json:"at"`
}

// EventItemLinked: an event already in a feed was found through another of
// the feed's attachments (so detaching the first one keeps it there).
type EventItemLinked struct {
	ItemID       uuid.UUID  `json:"itemId"`
	FeedID       uuid.UUID  `json:"feedId"`
	AttachmentID uuid.UUID  `json:"attachmentId"`
	SourceID     uuid.UUID  `json:"sourceId"`
	SourceType   SourceType `json:"sourceType"`
	EventID      uuid.UUID  `json:"eventId"`
	At           time.Time  `json:"at"`
}

func (EventItemAdded) EventType() string  { return "EventItemAdded" }
func (EventItemLinked) EventType() string { return "EventItemLinked" }

func init() {
	register(func() Event { return &EventItemAdded{} })
	register(func() Event { return &EventItemLinked{} })
}

// EventItem is one event in one feed, with the attachments that brought it
// and the feedback given on it.
type EventItem struct {
	added       EventItemAdded
	exists      bool
	attachments map[uuid.UUID]bool
}

// Apply folds a stored event.
func (i *EventItem) Apply(e Event) {
	switch ev := e.(type) {
	case EventItemAdded:
		i.added, i.exists = ev, true
		i.attachments = map[uuid.UUID]bool{ev.AttachmentID: true}
	case EventItemLinked:
		i.attachments[ev.AttachmentID] = true
	}
}

// Add decides putting an event into a feed through an attachment: added
// the first time, linked through each further attachment, nothing when
// the attachment already brought it.
func (i *EventItem) Add(to ItemTarget, eventID uuid.UUID, now time.Time) []Event {
	id := EventItemID(to.FeedID, eventID)
	switch {
	case !i.exists:
		return []Event{EventItemAdded{
			ItemID: id, FeedID: to.FeedID, OrganizationID: to.OrganizationID, AttachmentID: to.AttachmentID,
			SourceID: to.SourceID, SourceType: to.SourceType, EventID: eventID, At: now,
		}}
	case i.attachments[to.AttachmentID]:
		return nil
	default:
		return []Event{EventItemLinked{
			ItemID: id, FeedID: to.FeedID, AttachmentID: to.AttachmentID,
			SourceID: to.SourceID, SourceType: to.SourceType, EventID: eventID, At: now,
		}}
	}
}

// GiveFeedback decides a rating of the item by org, which must own it.
func (i *EventItem) GiveFeedback(id, itemID, org uuid.UUID, fb Feedback, now time.Time) ([]Event, error) {
	return rate(i.exists, FeedbackGiven{
		Kind: FeedEvents, ItemID: i.added.ItemID, FeedID: i.added.FeedID, OrganizationID: i.added.OrganizationID,
		EventID: i.added.EventID, SourceID: i.added.SourceID,
	}, id, itemID, org, fb, now)
}
