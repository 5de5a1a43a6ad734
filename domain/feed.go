package domain

import (
	"time"

	"github.com/google/uuid"
)

// Feed is a named container of sources for one organization, of one kind
// (news or events). Its state is rebuilt from its events with Apply; its
// decide methods return the events a change needs, or an error when the
// change would break an invariant. They never change the state themselves.
type Feed struct {
	kind        FeedKind
	id          uuid.UUID
	org         uuid.UUID
	name        string
	description string
	enabled     bool
	enabledBy   string
	reason      string
	config      *FeedConfig
	rules       FeedRules
	deleted     bool
	createdAt   time.Time
	updatedAt   time.Time
	attachments map[uuid.UUID]*Attachment
	// bySource holds the attachment of each source record, so a record is
	// attached at most once per feed.
	bySource map[uuid.UUID]uuid.UUID
}

// Attachment is a source record attached to a feed, as the feed knows it.
type Attachment struct {
	ID         uuid.UUID
	FeedID     uuid.UUID
	SourceID   uuid.UUID
	SourceType SourceType
	// Details are what the caller submitted (its siteId may differ from
	// the shared record's).
	Details   SourceDetails
	Enabled   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FeedState is a feed as a write leaves it, for answering the write from
// what it stored rather than from a read that a later write may change.
type FeedState struct {
	ID          uuid.UUID
	Kind        FeedKind
	Name        string
	Description string
	Enabled     bool
	// EnabledBy is who last enabled or disabled the feed (EnabledByAPI,
	// EnabledByAdmin, EnabledBySystem), and Reason why, if they said.
	EnabledBy string
	Reason    string
	// Config is an event feed's configuration; nil for news feeds.
	Config *FeedConfig
	// Rules are the feed's keyword rules (FeedRules); zero when none.
	Rules     FeedRules
	CreatedAt time.Time
	UpdatedAt time.Time
}

// maxReasonLength bounds why a feed was switched; it is shown on reads.
const maxReasonLength = 500

// Who changes whether a feed is enabled (api.md 2.7).
const (
	EnabledByAPI    = "api"
	EnabledByAdmin  = "admin"
	EnabledBySystem = "system"
)

// FeedStream is the event stream of a feed. Streams are per kind, so a news
// feed's id names no event feed.
func FeedStream(kind FeedKind, id uuid.UUID) string {
	if kind == FeedHappenings {
		return "eventfeed-" + id.String()
	}
	return "newsfeed-" + id.String()
}

// NewFeed is an empty feed of a kind, to apply stored events to.
func NewFeed(kind FeedKind) *Feed { return &Feed{kind: kind} }

// State returns the feed's current state.
func (f *Feed) State() FeedState {
	return FeedState{
		ID: f.id, Kind: f.kind, Name: f.name, Description: f.description, Enabled: f.enabled,
		EnabledBy: f.enabledBy, Reason: f.reason, Config: f.config, Rules: f.rules, CreatedAt: f.createdAt, UpdatedAt: f.updatedAt,
	}
}

// Attachment returns a current attachment.
func (f *Feed) Attachment(id uuid.UUID) (Attachment, bool) {
	a, ok := f.attachments[id]
	if !ok {
		return Attachment{}, false
	}
	return *a, true
}

// VisibleTo reports whether org may see the feed: it exists, is not
// deleted, and belongs to org.
func (f *Feed) VisibleTo(org uuid.UUID) bool {
	return f != nil && f.id != uuid.Nil && !f.deleted && f.org == org
}

// FeedOptions are what a feed may be created with besides its name and
// description: whether it starts enabled (default yes) and, for event
// feeds, its config (default DefaultFeedConfig).
type FeedOptions struct {
	Enabled *bool
	Config  *FeedConfig
}

// Create decides a new feed.
func (f *Feed) Create(id, org uuid.UUID, name, description string, opts FeedOptions, now time.Time) ([]Event, error) {
	if f.id != uuid.Nil {
		return nil, &ConflictError{Message: "feed already exists"}
	}
	config, err := f.configFor(opts.Config)
	if err != nil {
		return nil, err
	}
	n, err := newText("name", name, maxNameLength)
	if err != nil {
		return nil, err
	}
	d, err := newText("description", description, maxDescriptionLength)
	if err != nil {
		return nil, err
	}
	created := FeedCreated{Kind: f.kind, FeedID: id, OrganizationID: org, Name: n, Description: d, Config: config, At: now}
	if opts.Enabled != nil && !*opts.Enabled {
		created.Enabled = opts.Enabled
	}
	if f.kind == FeedHappenings {
		created.EnabledBy = EnabledByAPI
	}
	return []Event{created}, nil
}

// configFor is the config a feed of f's kind stores: event feeds always
// have one; news feeds have none.
func (f *Feed) configFor(c *FeedConfig) (*FeedConfig, error) {
	if f.kind != FeedHappenings {
		if c != nil {
			return nil, invalid("config", "is not a member of news feeds")
		}
		return nil, nil
	}
	if c == nil {
		d := DefaultFeedConfig()
		return &d, nil
	}
	return c, nil
}

// FeedUpdate is a partial update; nil members are left as they are. By
// and Reason say who enables or disables the feed, and why (default: the
// API, no reason).
type FeedUpdate struct {
	Name        *string
	Description *string
	Enabled     *bool
	Config      *FeedConfig
	// Rules, when set, replace the feed's rules.
	Rules  *FeedRules
	By     string
	Reason string
}

// Update decides a partial update: an event per member that changes, and
// none at all when any member is invalid.
func (f *Feed) Update(u FeedUpdate, now time.Time) ([]Event, error) {
	if err := f.mustBeLive(); err != nil {
		return nil, err
	}
	var events []Event
	if u.Name != nil {
		name, err := newText("name", *u.Name, maxNameLength)
		if err != nil {
			return nil, err
		}
		if name != f.name {
			events = append(events, FeedRenamed{Kind: f.kind, FeedID: f.id, Name: name, At: now})
		}
	}
	if u.Description != nil {
		description, err := newText("description", *u.Description, maxDescriptionLength)
		if err != nil {
			return nil, err
		}
		if description != f.description {
			events = append(events, FeedDescribed{Kind: f.kind, FeedID: f.id, Description: description, At: now})
		}
	}
	if u.Config != nil {
		config, err := f.configFor(u.Config)
		if err != nil {
			return nil, err
		}
		if !config.Equal(f.config) {
			events = append(events, FeedConfigured{Kind: f.kind, FeedID: f.id, Config: *config, At: now})
		}
	}
	if u.Rules != nil {
		if !u.Rules.Equal(f.rules) {
			events = append(events, FeedRulesChanged{Kind: f.kind, FeedID: f.id, Rules: *u.Rules, At: now})
		}
	}
	if u.Reason != "" {
		reason, err := newText("reason", u.Reason, maxReasonLength)
		if err != nil {
			return nil, err
		}
		u.Reason = reason
	}
	if e := f.enabling(u, now); e != nil {
		events = append(events, e)
	}
	return events, nil
}

// enabling decides the enable or disable of an update. Event feeds record
// who did it and why, so a change by another party is a change even when
// the flag stays.
func (f *Feed) enabling(u FeedUpdate, now time.Time) Event {
	if u.Enabled == nil {
		return nil
	}
	by := u.By
	if by == "" {
		by = EnabledByAPI
	}
	if f.kind != FeedHappenings {
		by, u.Reason = "", ""
	}
	if *u.Enabled == f.enabled && by == f.enabledBy && u.Reason == f.reason {
		return nil
	}
	if *u.Enabled {
		return FeedEnabled{Kind: f.kind, FeedID: f.id, By: by, Reason: u.Reason, At: now}
	}
	return FeedDisabled{Kind: f.kind, FeedID: f.id, By: by, Reason: u.Reason, At: now}
}

// Delete decides the feed's permanent removal; its attachments go with it.
func (f *Feed) Delete(now time.Time) ([]Event, error) {
	if err := f.mustBeLive(); err != nil {
		return nil, err
	}
	return []Event{FeedDeleted{Kind: f.kind, FeedID: f.id, At: now}}, nil
}

// AttachSource decides attaching a source record with the configuration
// the caller submitted. A record is attached at most once.
func (f *Feed) AttachSource(attachmentID uuid.UUID, source *Source, submitted SourceDetails, now time.Time) ([]Event, error) {
	if err := f.mustBeLive(); err != nil {
		return nil, err
	}
	if !source.exists {
		return nil, notFound("source", source.ID().String())
	}
	if submitted.Identity() != source.Details().Identity() {
		return nil, invalid("sourceType", "does not match the source record")
	}
	if _, dup := f.bySource[source.ID()]; dup {
		return nil, &ConflictError{Message: "source already exists for this feed"}
	}
	return []Event{SourceAttached{
		Kind: f.kind, FeedID: f.id, OrganizationID: f.org, AttachmentID: attachmentID,
		SourceID: source.ID(), SourceType: submitted.SourceType, Details: submitted, At: now,
	}}, nil
}

// SetSourceEnabled decides enabling or disabling an attachment; no change,
// no event.
func (f *Feed) SetSourceEnabled(attachmentID uuid.UUID, enabled bool, now time.Time) ([]Event, error) {
	if err := f.mustBeLive(); err != nil {
		return nil, err
	}
	a, ok := f.attachments[attachmentID]
	if !ok {
		return nil, notFound("source", attachmentID.String())
	}
	switch {
	case a.Enabled == enabled:
		return nil, nil
	case enabled:
		return []Event{SourceEnabled{Kind: f.kind, FeedID: f.id, AttachmentID: attachmentID, At: now}}, nil
	default:
		return []Event{SourceDisabled{Kind: f.kind, FeedID: f.id, AttachmentID: attachmentID, At: now}}, nil
	}
}

// DetachSource decides removing an attachment permanently.
func (f *Feed) DetachSource(attachmentID uuid.UUID, now time.Time) ([]Event, error) {
	if err := f.mustBeLive(); err != nil {
		return nil, err
	}
	if _, ok := f.attachments[attachmentID]; !ok {
		return nil, notFound("source", attachmentID.String())
	}
	return []Event{SourceDetached{Kind: f.kind, FeedID: f.id, AttachmentID: attachmentID, At: now}}, nil
}

func (f *Feed) mustBeLive() error {
	if f.id == uuid.Nil || f.deleted {
		return notFound("feed", f.id.String())
	}
	return nil
}

// Apply folds one stored or decided event into the state.
func (f *Feed) Apply(e Event) {
	switch ev := e.(type) {
	case FeedCreated:
		f.id, f.org, f.name, f.description = ev.FeedID, ev.OrganizationID, ev.Name, ev.Description
		f.enabled, f.createdAt, f.updatedAt = ev.Enabled == nil || *ev.Enabled, ev.At, ev.At
		f.enabledBy, f.config = ev.EnabledBy, ev.Config
		f.attachments = map[uuid.UUID]*Attachment{}
		f.bySource = map[uuid.UUID]uuid.UUID{}
	case FeedRenamed:
		f.name, f.updatedAt = ev.Name, ev.At
	case FeedDescribed:
		f.description, f.updatedAt = ev.Description, ev.At
	case FeedEnabled:
		f.enabled, f.enabledBy, f.reason, f.updatedAt = true, ev.By, ev.Reason, ev.At
	case FeedDisabled:
		f.enabled, f.enabledBy, f.reason, f.updatedAt = false, ev.By, ev.Reason, ev.At
	case FeedConfigured:
		config := ev.Config
		f.config, f.updatedAt = &config, ev.At
	case FeedRulesChanged:
		f.rules, f.updatedAt = ev.Rules, ev.At
	case FeedDeleted:
		f.deleted = true
	case SourceAttached:
		f.attachments[ev.AttachmentID] = &Attachment{
			ID: ev.AttachmentID, FeedID: ev.FeedID, SourceID: ev.SourceID, SourceType: ev.SourceType, Details: ev.Details,
			Enabled: true, CreatedAt: ev.At, UpdatedAt: ev.At,
		}
		f.bySource[ev.SourceID] = ev.AttachmentID
	case SourceEnabled:
		f.setEnabled(ev.AttachmentID, true, ev.At)
	case SourceDisabled:
		f.setEnabled(ev.AttachmentID, false, ev.At)
	case SourceDetached:
		if a, ok := f.attachments[ev.AttachmentID]; ok {
			delete(f.bySource, a.SourceID)
			delete(f.attachments, ev.AttachmentID)
		}
	}
}

func (f *Feed) setEnabled(id uuid.UUID, enabled bool, at time.Time) {
	if a, ok := f.attachments[id]; ok {
		a.Enabled, a.UpdatedAt = enabled, at
	}
}
