package domain

import (
	"time"

	"github.com/google/uuid"
)

// NewsFeed is a named container of news sources for one organization.
// Its state is rebuilt from its events; its methods decide new events and
// refuse those that would break an invariant.
type NewsFeed struct {
	id          uuid.UUID
	org         uuid.UUID
	name        string
	description string
	enabled     bool
	deleted     bool
	attachments map[uuid.UUID]*Attachment
	// bySource holds the attachment of each source record, so a record is
	// attached at most once per feed.
	bySource map[uuid.UUID]uuid.UUID
	version  int
	changes  []Event
}

// Attachment is a source record attached to a news feed, as far as the
// feed's decisions need it.
type Attachment struct {
	ID       uuid.UUID
	SourceID uuid.UUID
	Enabled  bool
}

// NewsFeedStream is the event stream of a news feed.
func NewsFeedStream(id uuid.UUID) string { return "newsfeed-" + id.String() }

// CreateNewsFeed validates and creates a feed. It starts enabled.
func CreateNewsFeed(id, org uuid.UUID, name, description string, now time.Time) (*NewsFeed, error) {
	n, err := newText("name", name, maxNameLength)
	if err != nil {
		return nil, err
	}
	d, err := newText("description", description, maxDescriptionLength)
	if err != nil {
		return nil, err
	}
	f := &NewsFeed{}
	f.record(NewsFeedCreated{FeedID: id, OrganizationID: org, Name: n, Description: d, At: now})
	return f, nil
}

// LoadNewsFeed rebuilds a feed from its stored events.
func LoadNewsFeed(events []Event) *NewsFeed {
	f := &NewsFeed{}
	for _, e := range events {
		f.apply(e)
		f.version++
	}
	return f
}

// ID, Organization and friends expose state for the command layer.
func (f *NewsFeed) ID() uuid.UUID           { return f.id }
func (f *NewsFeed) Organization() uuid.UUID { return f.org }
func (f *NewsFeed) Name() string            { return f.name }

// Version is the number of stored events the state was built from.
func (f *NewsFeed) Version() int { return f.version }

// Changes are the events decided since the feed was loaded.
func (f *NewsFeed) Changes() []Event { return f.changes }

// Attachments returns every current attachment.
func (f *NewsFeed) Attachments() []Attachment {
	out := make([]Attachment, 0, len(f.attachments))
	for _, a := range f.attachments {
		out = append(out, *a)
	}
	return out
}

// VisibleTo reports whether org may see the feed: it exists, is not
// deleted, and belongs to org.
func (f *NewsFeed) VisibleTo(org uuid.UUID) bool {
	return f != nil && f.id != uuid.Nil && !f.deleted && f.org == org
}

// FeedUpdate is a partial update; nil members are left as they are.
type FeedUpdate struct {
	Name        *string
	Description *string
	Enabled     *bool
}

// Update applies a partial update, recording an event per changed member.
func (f *NewsFeed) Update(u FeedUpdate, now time.Time) error {
	if err := f.mustBeLive(); err != nil {
		return err
	}
	var name, description string
	var err error
	if u.Name != nil {
		if name, err = newText("name", *u.Name, maxNameLength); err != nil {
			return err
		}
	}
	if u.Description != nil {
		if description, err = newText("description", *u.Description, maxDescriptionLength); err != nil {
			return err
		}
	}
	if u.Name != nil && name != f.name {
		f.record(NewsFeedRenamed{FeedID: f.id, Name: name, At: now})
	}
	if u.Description != nil && description != f.description {
		f.record(NewsFeedDescribed{FeedID: f.id, Description: description, At: now})
	}
	if u.Enabled != nil && *u.Enabled != f.enabled {
		if *u.Enabled {
			f.record(NewsFeedEnabled{FeedID: f.id, At: now})
		} else {
			f.record(NewsFeedDisabled{FeedID: f.id, At: now})
		}
	}
	return nil
}

// Delete removes the feed permanently; its attachments go with it.
func (f *NewsFeed) Delete(now time.Time) error {
	if err := f.mustBeLive(); err != nil {
		return err
	}
	f.record(NewsFeedDeleted{FeedID: f.id, At: now})
	return nil
}

// AttachSource attaches a source record with the configuration the caller
// submitted (its echo may differ from the shared record's, e.g. in siteId).
// A record is attached at most once.
func (f *NewsFeed) AttachSource(attachmentID uuid.UUID, source *Source, submitted SourceDetails, now time.Time) error {
	if err := f.mustBeLive(); err != nil {
		return err
	}
	if !source.Exists() {
		return notFound("source", source.ID().String())
	}
	if submitted.Identity() != source.Details().Identity() {
		return invalid("sourceType", "does not match the source record")
	}
	if _, dup := f.bySource[source.ID()]; dup {
		return &ConflictError{Message: "source already exists for this feed"}
	}
	f.record(NewsSourceAttached{
		FeedID: f.id, OrganizationID: f.org, AttachmentID: attachmentID,
		SourceID: source.ID(), SourceType: submitted.SourceType, Details: submitted, At: now,
	})
	return nil
}

// SetSourceEnabled enables or disables an attachment; no change, no event.
func (f *NewsFeed) SetSourceEnabled(attachmentID uuid.UUID, enabled bool, now time.Time) error {
	if err := f.mustBeLive(); err != nil {
		return err
	}
	a, ok := f.attachments[attachmentID]
	if !ok {
		return notFound("source", attachmentID.String())
	}
	if a.Enabled == enabled {
		return nil
	}
	if enabled {
		f.record(NewsSourceEnabled{FeedID: f.id, AttachmentID: attachmentID, At: now})
	} else {
		f.record(NewsSourceDisabled{FeedID: f.id, AttachmentID: attachmentID, At: now})
	}
	return nil
}

// DetachSource removes an attachment permanently.
func (f *NewsFeed) DetachSource(attachmentID uuid.UUID, now time.Time) error {
	if err := f.mustBeLive(); err != nil {
		return err
	}
	if _, ok := f.attachments[attachmentID]; !ok {
		return notFound("source", attachmentID.String())
	}
	f.record(NewsSourceDetached{FeedID: f.id, AttachmentID: attachmentID, At: now})
	return nil
}

func (f *NewsFeed) mustBeLive() error {
	if f.id == uuid.Nil || f.deleted {
		return notFound("feed", f.id.String())
	}
	return nil
}

func (f *NewsFeed) record(e Event) {
	f.apply(e)
	f.changes = append(f.changes, e)
}

func (f *NewsFeed) apply(e Event) {
	switch ev := e.(type) {
	case NewsFeedCreated:
		f.id, f.org, f.name, f.description = ev.FeedID, ev.OrganizationID, ev.Name, ev.Description
		f.enabled = true
		f.attachments = map[uuid.UUID]*Attachment{}
		f.bySource = map[uuid.UUID]uuid.UUID{}
	case NewsFeedRenamed:
		f.name = ev.Name
	case NewsFeedDescribed:
		f.description = ev.Description
	case NewsFeedEnabled:
		f.enabled = true
	case NewsFeedDisabled:
		f.enabled = false
	case NewsFeedDeleted:
		f.deleted = true
	case NewsSourceAttached:
		f.attachments[ev.AttachmentID] = &Attachment{ID: ev.AttachmentID, SourceID: ev.SourceID, Enabled: true}
		f.bySource[ev.SourceID] = ev.AttachmentID
	case NewsSourceEnabled:
		f.setEnabled(ev.AttachmentID, true)
	case NewsSourceDisabled:
		f.setEnabled(ev.AttachmentID, false)
	case NewsSourceDetached:
		if a, ok := f.attachments[ev.AttachmentID]; ok {
			delete(f.bySource, a.SourceID)
			delete(f.attachments, ev.AttachmentID)
		}
	}
}

func (f *NewsFeed) setEnabled(id uuid.UUID, enabled bool) {
	if a, ok := f.attachments[id]; ok {
		a.Enabled = enabled
	}
}
