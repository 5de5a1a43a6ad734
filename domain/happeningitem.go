package domain

import (
	"time"

	"github.com/google/uuid"
)

// HappeningItemStream is the stream of one happening in one feed: the happening is in
// a feed once, however many of its sources find it.
func HappeningItemStream(feedID, happeningID uuid.UUID) string {
	return "eventitem-" + feedID.String() + "-" + happeningID.String()
}

// HappeningItemID is the item id of a happening in a feed. It is derived, so the
// item keeps its id (and its feedback) when the happening leaves the feed with
// a detached source and comes back through another.
func HappeningItemID(feedID, happeningID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(feedID, []byte("event:"+happeningID.String()))
}

// HappeningItemAdded: a happening entered an event feed through one of its
// attachments. It is what the event.item_added webhook announces.
type HappeningItemAdded struct {
	ItemID         uuid.UUID  `json:"itemId"`
	FeedID         uuid.UUID  `json:"feedId"`
	OrganizationID uuid.UUID  `json:"organizationId"`
	AttachmentID   uuid.UUID  `json:"attachmentId"`
	SourceID       uuid.UUID  `json:"sourceId"`
	SourceType     SourceType `json:"sourceType"`
	HappeningID    uuid.UUID  `json:"eventId"`
	At             time.Time  `json:"at"`
}

// HappeningItemLinked: a happening already in a feed was found through another of
// the feed's attachments (so detaching the first one keeps it there).
type HappeningItemLinked struct {
	ItemID       uuid.UUID  `json:"itemId"`
	FeedID       uuid.UUID  `json:"feedId"`
	AttachmentID uuid.UUID  `json:"attachmentId"`
	SourceID     uuid.UUID  `json:"sourceId"`
	SourceType   SourceType `json:"sourceType"`
	HappeningID  uuid.UUID  `json:"eventId"`
	At           time.Time  `json:"at"`
}

// The stored names (EventItemAdded, EventItemLinked, eventitem- streams,
// eventId) stay as the log holds them; "event item" is also the API's word.
func (HappeningItemAdded) EventType() string  { return "EventItemAdded" }
func (HappeningItemLinked) EventType() string { return "EventItemLinked" }

func init() {
	register(func() Event { return &HappeningItemAdded{} })
	register(func() Event { return &HappeningItemLinked{} })
}

// HappeningItem is one happening in one feed, with the attachments that brought it
// and the feedback given on it.
type HappeningItem struct {
	added       HappeningItemAdded
	exists      bool
	attachments map[uuid.UUID]bool
	// copies are the happenings recorded as the item's (copies.go), split
	// those split off it.
	copies map[uuid.UUID]HappeningItemCopyFound
	split  map[uuid.UUID]bool
}

// Apply folds a stored event.
func (i *HappeningItem) Apply(e Event) {
	switch ev := e.(type) {
	case HappeningItemAdded:
		i.added, i.exists = ev, true
		i.attachments = map[uuid.UUID]bool{ev.AttachmentID: true}
	case HappeningItemLinked:
		i.attachments[ev.AttachmentID] = true
	case HappeningItemCopyFound:
		if i.copies == nil {
			i.copies = map[uuid.UUID]HappeningItemCopyFound{}
		}
		i.copies[ev.CopyID] = ev
	case HappeningItemCopySplit:
		delete(i.copies, ev.CopyID)
		if i.split == nil {
			i.split = map[uuid.UUID]bool{}
		}
		i.split[ev.CopyID] = true
	}
}

// Exists reports whether the item was added.
func (i *HappeningItem) Exists() bool { return i.exists }

// Add decides putting a happening into a feed through an attachment: added
// the first time, linked through each further attachment, nothing when
// the attachment already brought it.
func (i *HappeningItem) Add(to ItemTarget, happeningID uuid.UUID, now time.Time) []Event {
	id := HappeningItemID(to.FeedID, happeningID)
	switch {
	case !i.exists:
		return []Event{HappeningItemAdded{
			ItemID: id, FeedID: to.FeedID, OrganizationID: to.OrganizationID, AttachmentID: to.AttachmentID,
			SourceID: to.SourceID, SourceType: to.SourceType, HappeningID: happeningID, At: now,
		}}
	case i.attachments[to.AttachmentID]:
		return nil
	default:
		return []Event{HappeningItemLinked{
			ItemID: id, FeedID: to.FeedID, AttachmentID: to.AttachmentID,
			SourceID: to.SourceID, SourceType: to.SourceType, HappeningID: happeningID, At: now,
		}}
	}
}

// GiveFeedback decides a rating of the item by org, which must own it.
func (i *HappeningItem) GiveFeedback(id, itemID, org uuid.UUID, fb Feedback, now time.Time) ([]Event, error) {
	return rate(i.exists, FeedbackGiven{
		Kind: FeedHappenings, ItemID: i.added.ItemID, FeedID: i.added.FeedID, OrganizationID: i.added.OrganizationID,
		HappeningID: i.added.HappeningID, SourceID: i.added.SourceID,
	}, id, itemID, org, fb, now)
}
