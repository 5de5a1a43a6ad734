package domain_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

func TestWebhookSubscriptionsAreValidatedAndNormalized(t *testing.T) {
	ok := &[]string{"event.item_added"}
	feed := uuid.New()
	cases := []struct {
		name  string
		req   domain.WebhookRequest
		want  domain.WebhookConfig
		field string
	}{
		{"a url and an event are enough", domain.WebhookRequest{URL: ptr("HTTPS://Example.COM/in#frag"), Events: ok},
			domain.WebhookConfig{URL: "https://example.com/in", Events: []string{"event.item_added"}, EventFeedIDs: []uuid.UUID{}}, ""},
		{"repeated events and feeds collapse", domain.WebhookRequest{URL: ptr("https://e.com"), Events: &[]string{"event.item_added", "event.item_added"},
			EventFeedIDs: &[]string{feed.String(), feed.String()}},
			domain.WebhookConfig{URL: "https://e.com/", Events: []string{"event.item_added"}, EventFeedIDs: []uuid.UUID{feed}}, ""},
		{"a url is required", domain.WebhookRequest{Events: ok}, domain.WebhookConfig{}, "url"},
		{"events are required", domain.WebhookRequest{URL: ptr("https://e.com")}, domain.WebhookConfig{}, "events"},
		{"no events is refused", domain.WebhookRequest{URL: ptr("https://e.com"), Events: &[]string{}}, domain.WebhookConfig{}, "events"},
		{"an unknown event is refused", domain.WebhookRequest{URL: ptr("https://e.com"), Events: &[]string{"event.deleted"}}, domain.WebhookConfig{}, "events"},
		{"a feed id must be a UUID", domain.WebhookRequest{URL: ptr("https://e.com"), Events: ok, EventFeedIDs: &[]string{"1"}}, domain.WebhookConfig{}, "eventFeedIds"},
		{"a loopback literal is refused", domain.WebhookRequest{URL: ptr("http://127.0.0.1/"), Events: ok}, domain.WebhookConfig{}, "url"},
		{"a loopback literal passes when private networks are allowed", domain.WebhookRequest{URL: ptr("http://127.0.0.1:81/"), Events: ok,
			Targets: domain.TargetPolicy{AllowPrivateNetworks: true}},
			domain.WebhookConfig{URL: "http://127.0.0.1:81/", Events: []string{"event.item_added"}, EventFeedIDs: []uuid.UUID{}}, ""},
		{"a url over 2048 characters is refused", domain.WebhookRequest{URL: ptr("https://e.com/" + string(make([]byte, 2048))), Events: ok}, domain.WebhookConfig{}, "url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.NewWebhookConfig(c.req)
			var v *domain.ValidationError
			switch {
			case c.field != "" && (!errors.As(err, &v) || v.Field != c.field):
				t.Fatalf("error %v, want one naming %s", err, c.field)
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field == "" && jsonOf(got) != jsonOf(c.want):
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// created is a webhook as its creation left it.
func created(t *testing.T, org uuid.UUID, at time.Time) *domain.Webhook {
	t.Helper()
	w := &domain.Webhook{}
	events, err := w.Create(uuid.New(), org, domain.WebhookConfig{URL: "https://e.com/", Events: []string{"event.item_added"}, EventFeedIDs: []uuid.UUID{}}, uuid.New(), at)
	if err != nil {
		t.Fatal(err)
	}
	w.Apply(events[0])
	return w
}

func TestAWebhookUpdateDecidesOneEventPerChangeAndNoneForNoChange(t *testing.T) {
	org, now := uuid.New(), time.Now()
	w := created(t, org, now)
	id := w.State().ID
	cases := []struct {
		name string
		u    domain.WebhookUpdate
		want []string
	}{
		{"the same url is no change", domain.WebhookUpdate{Request: domain.WebhookRequest{URL: ptr("https://E.com")}}, nil},
		{"enabling an enabled webhook is no change", domain.WebhookUpdate{Enabled: ptr(true)}, nil},
		{"a new url is a change", domain.WebhookUpdate{Request: domain.WebhookRequest{URL: ptr("https://other.example/")}}, []string{"WebhookChanged"}},
		{"a filter and a disable are two", domain.WebhookUpdate{Request: domain.WebhookRequest{EventFeedIDs: &[]string{uuid.NewString()}}, Enabled: ptr(false)},
			[]string{"WebhookChanged", "WebhookDisabled"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events, err := w.Update(org, id, c.u, now)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range events {
				got = append(got, e.EventType())
			}
			if jsonOf(got) != jsonOf(c.want) {
				t.Fatalf("decided %v, want %v", got, c.want)
			}
		})
	}
	t.Run("another organization's webhook is not found", func(t *testing.T) {
		if _, err := w.Update(uuid.New(), id, domain.WebhookUpdate{Enabled: ptr(false)}, now); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestAWebhookIsDisabledByTheServiceOnlyAfterThreeDaysOfFailuresSinceItWasEnabled(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	org := uuid.New()
	cases := []struct {
		name           string
		reEnabledAfter time.Duration // 0: never disabled
		failingSince   time.Duration
		lastFailure    time.Duration
		wantDisabled   bool
	}{
		{"failing for under three days", 0, time.Hour, time.Hour + 71*time.Hour, false},
		{"failing for three days", 0, time.Hour, time.Hour + 72*time.Hour, true},
		{"failing for three days, re-enabled a day ago", 50 * time.Hour, time.Hour, 74 * time.Hour, false},
		{"failing for three days since it was re-enabled", 50 * time.Hour, time.Hour, 122 * time.Hour, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := created(t, org, start)
			id := w.State().ID
			if c.reEnabledAfter > 0 {
				off, _ := w.Update(org, id, domain.WebhookUpdate{Enabled: ptr(false)}, start.Add(c.reEnabledAfter-time.Minute))
				on := []domain.Event{domain.WebhookEnabled{WebhookID: id, By: domain.EnabledByAPI, At: start.Add(c.reEnabledAfter)}}
				for _, e := range append(off, on...) {
					w.Apply(e)
				}
			}
			events := w.DisableForFailures(start.Add(c.failingSince), start.Add(c.lastFailure), start.Add(c.lastFailure))
			if got := len(events) == 1; got != c.wantDisabled {
				t.Fatalf("decided %v, want disabled %v", events, c.wantDisabled)
			}
			if c.wantDisabled {
				d := events[0].(domain.WebhookDisabled)
				if d.By != domain.EnabledBySystem || d.Reason == "" {
					t.Fatalf("disabled by %q for %q", d.By, d.Reason)
				}
				w.Apply(d)
				if again := w.DisableForFailures(start, start.Add(200*time.Hour), start.Add(200*time.Hour)); len(again) != 0 {
					t.Fatalf("a disabled webhook is disabled again: %v", again)
				}
			}
		})
	}
}

func TestARotationKeepsThePreviousSecretSigningFor24Hours(t *testing.T) {
	org, now := uuid.New(), time.Now()
	w := created(t, org, now)
	st := w.State()
	next := uuid.New()
	events, err := w.RotateSecret(org, st.ID, next, now)
	if err != nil {
		t.Fatal(err)
	}
	r := events[0].(domain.WebhookSecretRotated)
	if r.SecretID != next || r.PreviousSecretID != st.SecretID || !r.PreviousValidUntil.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("rotation %+v", r)
	}
	w.Apply(r)
	del, _ := w.Delete(org, st.ID, now)
	w.Apply(del[0])
	if _, err := w.RotateSecret(org, st.ID, uuid.New(), now); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("rotating a deleted webhook: %v", err)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
