package domain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
)

// Event is a fact that happened to an aggregate. Names are past tense; the
// JSON form is the stored form, so fields are only ever added, never renamed
// (a breaking change gets a new event type with a version suffix).
type Event interface {
	EventType() string
}

// SchemaVersion of every event type defined here; stored in event metadata
// so that a later upcaster knows what it reads.
const SchemaVersion = 1

var registry = map[string]func() Event{}

func register(factory func() Event) {
	registry[factory().EventType()] = factory
}

// EncodeEvent serializes an event for the store.
func EncodeEvent(e Event) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", e.EventType(), err)
	}
	return b, nil
}

// DecodeEvent reads a stored event. Unknown types are an error: an event
// this build cannot read must stop a projector rather than be skipped.
func DecodeEvent(eventType string, data []byte) (Event, error) {
	factory, ok := registry[eventType]
	if !ok {
		return nil, fmt.Errorf("decode event: unknown event type %q", eventType)
	}
	e := factory()
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("decode event %s: %w", eventType, err)
	}
	return derefEvent(e), nil
}

// Events are registered as pointers for json.Unmarshal and handed out as
// values so that type switches in consumers match value types.
func derefEvent(e Event) Event {
	return reflect.ValueOf(e).Elem().Interface().(Event)
}

func init() {
	register(func() Event { return &NewsFeedCreated{} })
	register(func() Event { return &NewsFeedRenamed{} })
	register(func() Event { return &NewsFeedDescribed{} })
	register(func() Event { return &NewsFeedEnabled{} })
	register(func() Event { return &NewsFeedDisabled{} })
	register(func() Event { return &NewsFeedDeleted{} })
	register(func() Event { return &NewsSourceAttached{} })
	register(func() Event { return &NewsSourceEnabled{} })
	register(func() Event { return &NewsSourceDisabled{} })
	register(func() Event { return &NewsSourceDetached{} })
	register(func() Event { return &SourceRegistered{} })
	register(func() Event { return &SourceLinkedToOrganization{} })
	register(func() Event { return &ArticleDiscovered{} })
	register(func() Event { return &ArticleFoundOnSource{} })
	register(func() Event { return &NewsItemAdded{} })
	register(func() Event { return &FeedbackGiven{} })
}

// News feed events.

type NewsFeedCreated struct {
	FeedID         uuid.UUID `json:"feedId"`
	OrganizationID uuid.UUID `json:"organizationId"`
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	At             time.Time `json:"at"`
}

type NewsFeedRenamed struct {
	FeedID uuid.UUID `json:"feedId"`
	Name   string    `json:"name"`
	At     time.Time `json:"at"`
}

type NewsFeedDescribed struct {
	FeedID      uuid.UUID `json:"feedId"`
	Description string    `json:"description"`
	At          time.Time `json:"at"`
}

type NewsFeedEnabled struct {
	FeedID uuid.UUID `json:"feedId"`
	At     time.Time `json:"at"`
}

type NewsFeedDisabled struct {
	FeedID uuid.UUID `json:"feedId"`
	At     time.Time `json:"at"`
}

type NewsFeedDeleted struct {
	FeedID uuid.UUID `json:"feedId"`
	At     time.Time `json:"at"`
}

type NewsSourceAttached struct {
	FeedID         uuid.UUID     `json:"feedId"`
	OrganizationID uuid.UUID     `json:"organizationId"`
	AttachmentID   uuid.UUID     `json:"attachmentId"`
	SourceID       uuid.UUID     `json:"sourceId"`
	SourceType     SourceType    `json:"sourceType"`
	Details        SourceDetails `json:"details"`
	At             time.Time     `json:"at"`
}

type NewsSourceEnabled struct {
	FeedID       uuid.UUID `json:"feedId"`
	AttachmentID uuid.UUID `json:"attachmentId"`
	At           time.Time `json:"at"`
}

type NewsSourceDisabled struct {
	FeedID       uuid.UUID `json:"feedId"`
	AttachmentID uuid.UUID `json:"attachmentId"`
	At           time.Time `json:"at"`
}

type NewsSourceDetached struct {
	FeedID       uuid.UUID `json:"feedId"`
	AttachmentID uuid.UUID `json:"attachmentId"`
	At           time.Time `json:"at"`
}

// Source record events.

type SourceRegistered struct {
	SourceID       uuid.UUID     `json:"sourceId"`
	SourceType     SourceType    `json:"sourceType"`
	Details        SourceDetails `json:"details"`
	OrganizationID uuid.UUID     `json:"organizationId"`
	At             time.Time     `json:"at"`
}

type SourceLinkedToOrganization struct {
	SourceID       uuid.UUID `json:"sourceId"`
	OrganizationID uuid.UUID `json:"organizationId"`
	At             time.Time `json:"at"`
}

func (e NewsFeedCreated) EventType() string            { return "NewsFeedCreated" }
func (e NewsFeedRenamed) EventType() string            { return "NewsFeedRenamed" }
func (e NewsFeedDescribed) EventType() string          { return "NewsFeedDescribed" }
func (e NewsFeedEnabled) EventType() string            { return "NewsFeedEnabled" }
func (e NewsFeedDisabled) EventType() string           { return "NewsFeedDisabled" }
func (e NewsFeedDeleted) EventType() string            { return "NewsFeedDeleted" }
func (e NewsSourceAttached) EventType() string         { return "NewsSourceAttached" }
func (e NewsSourceEnabled) EventType() string          { return "NewsSourceEnabled" }
func (e NewsSourceDisabled) EventType() string         { return "NewsSourceDisabled" }
func (e NewsSourceDetached) EventType() string         { return "NewsSourceDetached" }
func (e SourceRegistered) EventType() string           { return "SourceRegistered" }
func (e SourceLinkedToOrganization) EventType() string { return "SourceLinkedToOrganization" }
