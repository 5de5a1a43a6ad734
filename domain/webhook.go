package domain

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain/search"
)

// WebhookItemAdded is the one webhook event kind (api.md 6): an event was
// added to an event feed.
const WebhookItemAdded = "event.item_added"

// WebhookEvents are the event kinds a webhook may subscribe to.
var WebhookEvents = []string{WebhookItemAdded}

// Limits on a subscription.
const (
	maxWebhookFeedIDs = 100
	// SecretGrace is how long a rotated-out secret keeps signing beside the
	// new one, so receivers can switch without dropping deliveries.
	SecretGrace = 24 * time.Hour
	// FailingDisableAfter is how long a webhook's receiver may fail every
	// delivery before the service disables it.
	FailingDisableAfter = 72 * time.Hour
)

// WebhookStream is the event stream of one webhook subscription.
func WebhookStream(id uuid.UUID) string { return "webhook-" + id.String() }

// WebhookCreated: an organization subscribed an endpoint. SecretID names
// the signing secret, which is kept outside the log (a secret in an
// immutable log could never be removed after a rotation).
type WebhookCreated struct {
	WebhookID      uuid.UUID   `json:"webhookId"`
	OrganizationID uuid.UUID   `json:"organizationId"`
	URL            string      `json:"url"`
	Events         []string    `json:"events"`
	EventFeedIDs   []uuid.UUID `json:"eventFeedIds"`
	// Filter is a query in the syntax of domain/search that an item's
	// event must match to be delivered; empty for every item.
	Filter   string    `json:"filter,omitempty"`
	SecretID uuid.UUID `json:"secretId"`
	At       time.Time `json:"at"`
}

// WebhookChanged: the endpoint or its filters changed; the members are the
// whole new configuration.
type WebhookChanged struct {
	WebhookID    uuid.UUID   `json:"webhookId"`
	URL          string      `json:"url"`
	Events       []string    `json:"events"`
	EventFeedIDs []uuid.UUID `json:"eventFeedIds"`
	Filter       string      `json:"filter,omitempty"`
	At           time.Time   `json:"at"`
}

// WebhookEnabled and WebhookDisabled: By is who (api or system), Reason
// why when the service did it.
type WebhookEnabled struct {
	WebhookID uuid.UUID `json:"webhookId"`
	By        string    `json:"by"`
	Reason    string    `json:"reason,omitempty"`
	At        time.Time `json:"at"`
}

type WebhookDisabled struct {
	WebhookID uuid.UUID `json:"webhookId"`
	By        string    `json:"by"`
	Reason    string    `json:"reason,omitempty"`
	At        time.Time `json:"at"`
}

// WebhookSecretRotated: a new secret signs from now on; the previous one
// signs beside it until PreviousValidUntil.
type WebhookSecretRotated struct {
	WebhookID          uuid.UUID `json:"webhookId"`
	SecretID           uuid.UUID `json:"secretId"`
	PreviousSecretID   uuid.UUID `json:"previousSecretId"`
	PreviousValidUntil time.Time `json:"previousValidUntil"`
	At                 time.Time `json:"at"`
}

type WebhookDeleted struct {
	WebhookID uuid.UUID `json:"webhookId"`
	At        time.Time `json:"at"`
}

func (WebhookCreated) EventType() string       { return "WebhookCreated" }
func (WebhookChanged) EventType() string       { return "WebhookChanged" }
func (WebhookEnabled) EventType() string       { return "WebhookEnabled" }
func (WebhookDisabled) EventType() string      { return "WebhookDisabled" }
func (WebhookSecretRotated) EventType() string { return "WebhookSecretRotated" }
func (WebhookDeleted) EventType() string       { return "WebhookDeleted" }

func init() {
	register(func() Event { return &WebhookCreated{} })
	register(func() Event { return &WebhookChanged{} })
	register(func() Event { return &WebhookEnabled{} })
	register(func() Event { return &WebhookDisabled{} })
	register(func() Event { return &WebhookSecretRotated{} })
	register(func() Event { return &WebhookDeleted{} })
}

// WebhookConfig is what a subscription sends where: the endpoint, the event
// kinds, and the event feeds (none means every event feed of the
// organization).
type WebhookConfig struct {
	URL          string
	Events       []string
	EventFeedIDs []uuid.UUID
	// Filter, when set, is a query (domain/search) an item's event must
	// match to be delivered (WebhookFilterMatches).
	Filter string
}

// WebhookRequest is an unvalidated subscription as the API receives it;
// nil members are absent.
type WebhookRequest struct {
	URL          *string
	Events       *[]string
	EventFeedIDs *[]string
	// Filter is the query items must match; empty removes it.
	Filter *string
	// Targets is the operator's rule for the hosts an endpoint may name.
	Targets TargetPolicy
}

// NewWebhookConfig validates a subscription: an absolute http(s) URL on a
// public host (D10), known event kinds, event feed ids that are UUIDs.
func NewWebhookConfig(r WebhookRequest) (WebhookConfig, error) {
	if r.URL == nil {
		return WebhookConfig{}, invalid("url", "is required")
	}
	if r.Events == nil {
		return WebhookConfig{}, invalid("events", "is required")
	}
	return WebhookConfig{}.with(r)
}

// with applies the members r sets to c, validating them.
func (c WebhookConfig) with(r WebhookRequest) (WebhookConfig, error) {
	if r.URL != nil {
		u, err := NewWebhookURL(*r.URL, r.Targets)
		if err != nil {
			return WebhookConfig{}, err
		}
		c.URL = u
	}
	if r.Events != nil {
		events, err := webhookEvents(*r.Events)
		if err != nil {
			return WebhookConfig{}, err
		}
		c.Events = events
	}
	if r.EventFeedIDs != nil {
		ids, err := ParseWebhookFeedIDs(*r.EventFeedIDs)
		if err != nil {
			return WebhookConfig{}, err
		}
		c.EventFeedIDs = ids
	}
	if r.Filter != nil {
		filter := cleanText(*r.Filter)
		if filter != "" {
			if _, err := search.Parse(filter); err != nil {
				var syntax *search.SyntaxError
				if errors.As(err, &syntax) {
					return WebhookConfig{}, invalid("filter", syntax.Issue)
				}
				return WebhookConfig{}, err
			}
		}
		c.Filter = filter
	}
	if c.EventFeedIDs == nil {
		c.EventFeedIDs = []uuid.UUID{}
	}
	return c, nil
}

// WebhookFilterMatches is whether an event whose details are d passes a
// webhook's filter: its title, description, venue, address or organizer
// match it, without regard to case or accents. An empty or unreadable
// filter passes everything (a stored filter was read when it was set).
func WebhookFilterMatches(filter string, d HappeningDetails) bool {
	if filter == "" {
		return true
	}
	q, err := search.Parse(filter)
	if err != nil {
		return true
	}
	return q.Matches(search.Fold(d.SearchText()...))
}

// NewWebhookURL normalizes an endpoint and refuses non-public address
// literals unless the policy allows them; names are checked again at every
// dial, since what they resolve to can change.
func NewWebhookURL(raw string, targets TargetPolicy) (string, error) {
	return targets.URL("url", raw)
}

// CheckWebhookEvent refuses an event kind no webhook can carry.
func CheckWebhookEvent(field, event string) error {
	if !slices.Contains(WebhookEvents, event) {
		return invalid(field, "must be one of "+strings.Join(WebhookEvents, ", "))
	}
	return nil
}

func webhookEvents(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, invalid("events", "must name at least one event")
	}
	out := []string{}
	for _, e := range in {
		if err := CheckWebhookEvent("events", e); err != nil {
			return nil, err
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// ParseWebhookFeedIDs reads a subscription's event feed ids.
func ParseWebhookFeedIDs(in []string) ([]uuid.UUID, error) {
	if len(in) > maxWebhookFeedIDs {
		return nil, invalid("eventFeedIds", "must hold at most 100 ids")
	}
	out := []uuid.UUID{}
	for _, s := range in {
		id, err := uuid.Parse(s)
		if err != nil || len(s) != 36 {
			return nil, invalid("eventFeedIds", "must hold UUIDs")
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// Webhook is one subscription, rebuilt from its stream.
type Webhook struct {
	id        uuid.UUID
	org       uuid.UUID
	config    WebhookConfig
	enabled   bool
	enabledBy string
	reason    string
	// enabledAt is when it was created or last enabled: failures before it
	// do not count towards disabling it again.
	enabledAt time.Time
	secretID  uuid.UUID
	deleted   bool
	createdAt time.Time
	updatedAt time.Time
}

// WebhookState is a webhook as a write leaves it.
type WebhookState struct {
	ID        uuid.UUID
	Config    WebhookConfig
	Enabled   bool
	EnabledBy string
	Reason    string
	SecretID  uuid.UUID
	CreatedAt time.Time
	UpdatedAt time.Time
}

// State returns the webhook's current state.
func (w *Webhook) State() WebhookState {
	return WebhookState{
		ID: w.id, Config: w.config, Enabled: w.enabled, EnabledBy: w.enabledBy, Reason: w.reason,
		SecretID: w.secretID, CreatedAt: w.createdAt, UpdatedAt: w.updatedAt,
	}
}

// Apply folds a stored or decided event.
func (w *Webhook) Apply(e Event) {
	switch ev := e.(type) {
	case WebhookCreated:
		w.id, w.org, w.secretID = ev.WebhookID, ev.OrganizationID, ev.SecretID
		w.config = WebhookConfig{URL: ev.URL, Events: ev.Events, EventFeedIDs: ev.EventFeedIDs, Filter: ev.Filter}
		w.enabled, w.enabledBy, w.enabledAt = true, EnabledByAPI, ev.At
		w.createdAt, w.updatedAt = ev.At, ev.At
	case WebhookChanged:
		w.config = WebhookConfig{URL: ev.URL, Events: ev.Events, EventFeedIDs: ev.EventFeedIDs, Filter: ev.Filter}
		w.updatedAt = ev.At
	case WebhookEnabled:
		w.enabled, w.enabledBy, w.reason, w.enabledAt, w.updatedAt = true, ev.By, ev.Reason, ev.At, ev.At
	case WebhookDisabled:
		w.enabled, w.enabledBy, w.reason, w.updatedAt = false, ev.By, ev.Reason, ev.At
	case WebhookSecretRotated:
		w.secretID, w.updatedAt = ev.SecretID, ev.At
	case WebhookDeleted:
		w.deleted, w.updatedAt = true, ev.At
	}
}

// VisibleTo reports whether org may see the webhook.
func (w *Webhook) VisibleTo(org uuid.UUID) bool {
	return w.id != uuid.Nil && !w.deleted && w.org == org
}

func (w *Webhook) mustBeLive(org uuid.UUID, id uuid.UUID) error {
	if !w.VisibleTo(org) {
		return notFound("webhook", id.String())
	}
	return nil
}

// Create decides a new subscription signed with secretID.
func (w *Webhook) Create(id, org uuid.UUID, c WebhookConfig, secretID uuid.UUID, now time.Time) ([]Event, error) {
	if w.id != uuid.Nil {
		return nil, &ConflictError{Message: "webhook already exists"}
	}
	return []Event{WebhookCreated{
		WebhookID: id, OrganizationID: org, URL: c.URL, Events: c.Events, EventFeedIDs: c.EventFeedIDs, Filter: c.Filter,
		SecretID: secretID, At: now,
	}}, nil
}

// WebhookUpdate is a partial update by the API; Enabled true re-enables a
// webhook the service disabled.
type WebhookUpdate struct {
	Request WebhookRequest
	Enabled *bool
}

// Update decides a partial update: nothing when nothing changes, no event
// at all when any member is invalid.
func (w *Webhook) Update(org, id uuid.UUID, u WebhookUpdate, now time.Time) ([]Event, error) {
	if err := w.mustBeLive(org, id); err != nil {
		return nil, err
	}
	next, err := w.config.with(u.Request)
	if err != nil {
		return nil, err
	}
	var events []Event
	if !sameWebhookConfig(next, w.config) {
		events = append(events, WebhookChanged{WebhookID: w.id, URL: next.URL, Events: next.Events, EventFeedIDs: next.EventFeedIDs, Filter: next.Filter, At: now})
	}
	if u.Enabled != nil && *u.Enabled != w.enabled {
		if *u.Enabled {
			events = append(events, WebhookEnabled{WebhookID: w.id, By: EnabledByAPI, At: now})
		} else {
			events = append(events, WebhookDisabled{WebhookID: w.id, By: EnabledByAPI, At: now})
		}
	}
	return events, nil
}

func sameWebhookConfig(a, b WebhookConfig) bool {
	return a.URL == b.URL && slices.Equal(a.Events, b.Events) && slices.Equal(a.EventFeedIDs, b.EventFeedIDs) && a.Filter == b.Filter
}

// DisableForFailures decides the service's disabling of a webhook whose
// receiver has failed every delivery since failingSince, the last time at
// lastFailure: only once that lasted FailingDisableAfter since the webhook
// was last enabled, so a re-enabled webhook gets a fresh three days.
func (w *Webhook) DisableForFailures(failingSince, lastFailure, now time.Time) []Event {
	if w.id == uuid.Nil || w.deleted || !w.enabled {
		return nil
	}
	since := failingSince
	if w.enabledAt.After(since) {
		since = w.enabledAt
	}
	if lastFailure.Sub(since) < FailingDisableAfter {
		return nil
	}
	return []Event{WebhookDisabled{
		WebhookID: w.id, By: EnabledBySystem, At: now,
		Reason: "every delivery failed for 3 days; re-enable with PATCH {\"enabled\": true}",
	}}
}

// RotateSecret decides signing with secretID from now on, the current
// secret signing beside it for SecretGrace.
func (w *Webhook) RotateSecret(org, id, secretID uuid.UUID, now time.Time) ([]Event, error) {
	if err := w.mustBeLive(org, id); err != nil {
		return nil, err
	}
	return []Event{WebhookSecretRotated{
		WebhookID: w.id, SecretID: secretID, PreviousSecretID: w.secretID,
		PreviousValidUntil: now.Add(SecretGrace), At: now,
	}}, nil
}

// Delete decides removing the subscription.
func (w *Webhook) Delete(org, id uuid.UUID, now time.Time) ([]Event, error) {
	if err := w.mustBeLive(org, id); err != nil {
		return nil, err
	}
	return []Event{WebhookDeleted{WebhookID: w.id, At: now}}, nil
}
