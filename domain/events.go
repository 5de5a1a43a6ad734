package domain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Event is a fact that happened to an aggregate. Names are past tense; the
// JSON form is the stored form, so fields are only ever added, never renamed
// (a breaking change gets a new event type with a version suffix).
type Event interface {
	EventType() string
}

// Aggregate is anything rebuilt by applying its stream's events in order.
type Aggregate interface {
	Apply(Event)
}

// SchemaVersion of every event type defined here; stored in event metadata
// so that a later upcaster knows what it reads.
const SchemaVersion = 1

var (
	registry = map[string]func() Event{}
	// namesByType lists the stored names each Go event type is read from:
	// one for most, one per feed kind for feed events.
	namesByType = map[reflect.Type][]string{}
)

func register(factory func() Event) {
	e := factory()
	name := e.EventType()
	registry[name] = factory
	t := reflect.TypeOf(e).Elem()
	namesByType[t] = append(namesByType[t], name)
}

// registerKinds registers a feed event once per kind: the kind is part of
// the stored name (NewsFeedCreated, EventFeedCreated), not of the data.
func registerKinds(factory func(FeedKind) Event) {
	for _, k := range FeedKinds {
		register(func() Event { return factory(k) })
	}
}

// EventTypesOf returns the stored names of the events of Go type t (a value
// type such as FeedCreated). Consumers derive what they subscribe to from
// the types they handle, so the two cannot drift apart.
func EventTypesOf(t reflect.Type) []string { return slices.Clone(namesByType[t]) }

// EventTypeNames returns every registered stored name.
func EventTypeNames() []string {
	out := make([]string, 0, len(registry))
	for name := range registry {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
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
	registerKinds(func(k FeedKind) Event { return &FeedCreated{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &FeedRenamed{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &FeedDescribed{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &FeedEnabled{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &FeedDisabled{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &FeedDeleted{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &FeedConfigured{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &SourceAttached{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &SourceEnabled{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &SourceDisabled{Kind: k} })
	registerKinds(func(k FeedKind) Event { return &SourceDetached{Kind: k} })
	register(func() Event { return &SourceRegistered{} })
	register(func() Event { return &SourceLinkedToOrganization{} })
	register(func() Event { return &ArticleDiscovered{} })
	register(func() Event { return &ArticleFoundOnSource{} })
	register(func() Event { return &NewsItemAdded{} })
	register(func() Event { return &FeedbackGiven{} })
}

// Feed events, shared by every feed kind. Kind is not stored in the data:
// it is the prefix of the stored name (EventType), so news feeds' events
// keep the names they were first stored under.

// FeedCreated: Enabled is absent when the feed starts enabled (every news
// feed); EnabledBy and Config are set for event feeds only.
type FeedCreated struct {
	Kind           FeedKind    `json:"-"`
	FeedID         uuid.UUID   `json:"feedId"`
	OrganizationID uuid.UUID   `json:"organizationId"`
	Name           string      `json:"name"`
	Description    string      `json:"description"`
	Enabled        *bool       `json:"enabled,omitempty"`
	EnabledBy      string      `json:"enabledBy,omitempty"`
	Config         *FeedConfig `json:"config,omitempty"`
	At             time.Time   `json:"at"`
}

type FeedRenamed struct {
	Kind   FeedKind  `json:"-"`
	FeedID uuid.UUID `json:"feedId"`
	Name   string    `json:"name"`
	At     time.Time `json:"at"`
}

type FeedDescribed struct {
	Kind        FeedKind  `json:"-"`
	FeedID      uuid.UUID `json:"feedId"`
	Description string    `json:"description"`
	At          time.Time `json:"at"`
}

// FeedEnabled and FeedDisabled: By and Reason are set for event feeds
// (who changed it: api, admin or system).
type FeedEnabled struct {
	Kind   FeedKind  `json:"-"`
	FeedID uuid.UUID `json:"feedId"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

type FeedDisabled struct {
	Kind   FeedKind  `json:"-"`
	FeedID uuid.UUID `json:"feedId"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// FeedConfigured: an event feed's config was replaced.
type FeedConfigured struct {
	Kind   FeedKind   `json:"-"`
	FeedID uuid.UUID  `json:"feedId"`
	Config FeedConfig `json:"config"`
	At     time.Time  `json:"at"`
}

type FeedDeleted struct {
	Kind   FeedKind  `json:"-"`
	FeedID uuid.UUID `json:"feedId"`
	At     time.Time `json:"at"`
}

type SourceAttached struct {
	Kind           FeedKind      `json:"-"`
	FeedID         uuid.UUID     `json:"feedId"`
	OrganizationID uuid.UUID     `json:"organizationId"`
	AttachmentID   uuid.UUID     `json:"attachmentId"`
	SourceID       uuid.UUID     `json:"sourceId"`
	SourceType     SourceType    `json:"sourceType"`
	Details        SourceDetails `json:"details"`
	At             time.Time     `json:"at"`
}

type SourceEnabled struct {
	Kind         FeedKind  `json:"-"`
	FeedID       uuid.UUID `json:"feedId"`
	AttachmentID uuid.UUID `json:"attachmentId"`
	At           time.Time `json:"at"`
}

type SourceDisabled struct {
	Kind         FeedKind  `json:"-"`
	FeedID       uuid.UUID `json:"feedId"`
	AttachmentID uuid.UUID `json:"attachmentId"`
	At           time.Time `json:"at"`
}

type SourceDetached struct {
	Kind         FeedKind  `json:"-"`
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

// SourceLinkedToOrganization: another organization registered or attached
// a known record. Details are what it submitted (its own siteId); absent in
// events stored before organizations had their own view of a record.
type SourceLinkedToOrganization struct {
	SourceID       uuid.UUID      `json:"sourceId"`
	OrganizationID uuid.UUID      `json:"organizationId"`
	Details        *SourceDetails `json:"details,omitempty"`
	At             time.Time      `json:"at"`
}

func (e FeedCreated) EventType() string                { return e.Kind.eventPrefix() + "FeedCreated" }
func (e FeedRenamed) EventType() string                { return e.Kind.eventPrefix() + "FeedRenamed" }
func (e FeedDescribed) EventType() string              { return e.Kind.eventPrefix() + "FeedDescribed" }
func (e FeedEnabled) EventType() string                { return e.Kind.eventPrefix() + "FeedEnabled" }
func (e FeedDisabled) EventType() string               { return e.Kind.eventPrefix() + "FeedDisabled" }
func (e FeedDeleted) EventType() string                { return e.Kind.eventPrefix() + "FeedDeleted" }
func (e FeedConfigured) EventType() string             { return e.Kind.eventPrefix() + "FeedConfigured" }
func (e SourceAttached) EventType() string             { return e.Kind.eventPrefix() + "SourceAttached" }
func (e SourceEnabled) EventType() string              { return e.Kind.eventPrefix() + "SourceEnabled" }
func (e SourceDisabled) EventType() string             { return e.Kind.eventPrefix() + "SourceDisabled" }
func (e SourceDetached) EventType() string             { return e.Kind.eventPrefix() + "SourceDetached" }
func (e SourceRegistered) EventType() string           { return "SourceRegistered" }
func (e SourceLinkedToOrganization) EventType() string { return "SourceLinkedToOrganization" }

// FeedKind says which kind of feed a feed event happened to.
func (e FeedCreated) FeedKind() FeedKind    { return e.Kind }
func (e FeedRenamed) FeedKind() FeedKind    { return e.Kind }
func (e FeedDescribed) FeedKind() FeedKind  { return e.Kind }
func (e FeedEnabled) FeedKind() FeedKind    { return e.Kind }
func (e FeedDisabled) FeedKind() FeedKind   { return e.Kind }
func (e FeedDeleted) FeedKind() FeedKind    { return e.Kind }
func (e FeedConfigured) FeedKind() FeedKind { return e.Kind }
func (e SourceAttached) FeedKind() FeedKind { return e.Kind }
func (e SourceEnabled) FeedKind() FeedKind  { return e.Kind }
func (e SourceDisabled) FeedKind() FeedKind { return e.Kind }
func (e SourceDetached) FeedKind() FeedKind { return e.Kind }
