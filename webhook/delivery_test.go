package webhook_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/docs/webhooks/receiver"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

func TestAnAddedItemReachesItsSubscriberSignedWithTheDocumentedHeaders(t *testing.T) {
	s := newStack(t, testConfig())
	rc := newReceiver(t, nil)
	feed := uuid.New()
	hookID, secret := s.subscribe(rc.URL + "/hooks")
	eventID, added := s.addItem(feed, "Jazz night")

	wait.Until(t, 20*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
	got := rc.requests()[0]
	h := got.Header
	if h.Get("Content-Type") != "application/json" {
		t.Errorf("content-type %q", h.Get("Content-Type"))
	}
	if h.Get(webhook.HeaderWebhookID) != hookID.String() || h.Get(webhook.HeaderEventID) != eventID.String() {
		t.Errorf("webhook id %q event id %q; want %s %s", h.Get(webhook.HeaderWebhookID), h.Get(webhook.HeaderEventID), hookID, eventID)
	}
	ts, err := strconv.ParseInt(h.Get(webhook.HeaderTimestamp), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > time.Minute {
		t.Errorf("timestamp header %q is not the Unix time of the attempt", h.Get(webhook.HeaderTimestamp))
	}
	sig := h.Get(webhook.HeaderSignature)
	if len(sig) != 64 || strings.ToLower(sig) != sig {
		t.Errorf("signature %q is not one lowercase hex SHA-256", sig)
	}
	if receiver.Verify(secret, sig, h.Get(webhook.HeaderTimestamp), got.Body, time.Now()) != nil {
		t.Fatal("the receiver cannot verify the signature with its secret")
	}
	if receiver.Verify("whsec_other", sig, h.Get(webhook.HeaderTimestamp), got.Body, time.Now()) == nil {
		t.Fatal("another secret verifies the signature")
	}

	body := decode(t, got.Body)
	if body["event"] != "event.item_added" {
		t.Errorf("event %v", body["event"])
	}
	if body["timestamp"] != added.At.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("timestamp %v, want the add's %v", body["timestamp"], added.At)
	}
	data, _ := body["data"].(map[string]any)
	if data["id"] != added.ItemID.String() || data["eventId"] != added.HappeningID.String() || data["title"] != "Jazz night" {
		t.Errorf("data %v does not describe the added item", data)
	}
	if _, ok := data["sourceType"]; ok {
		t.Errorf("data carries sourceType: %v", data)
	}
	// Every stored event has a time block (its zone at least), rendered as
	// the /v0 list renders it; the members this event lacks are null.
	if _, ok := data["time"].(map[string]any); !ok {
		t.Errorf("legacy layout: time must be the event's time block, got %v", data["time"])
	}
	for _, k := range []string{"publishedAt", "shortDescription", "primaryImage", "primaryUrl", "location", "capacity", "organizer"} {
		if v, ok := data[k]; !ok || v != nil {
			t.Errorf("legacy layout: %s must be present and null here, got %v (present %v)", k, v, ok)
		}
	}
	for _, k := range []string{"supportingImages", "urls", "geoLocations"} {
		if _, ok := data[k].([]any); !ok {
			t.Errorf("legacy layout: %s must be an array, got %v", k, data[k])
		}
	}
}

func TestOnlyMatchingWebhooksGetAnItemAndALinkedEventIsNoNewItem(t *testing.T) {
	s := newStack(t, testConfig())
	feedA, feedB := uuid.New(), uuid.New()
	all, onlyA, onlyB := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	s.subscribe(all.URL)
	s.subscribe(onlyA.URL, feedA)
	s.subscribe(onlyB.URL, feedB)
	other := newReceiver(t, nil)
	otherOrg := *s
	otherOrg.org = uuid.New()
	otherOrg.subscribe(other.URL)

	eventID, added := s.addItem(feedA, "In A")
	// The same event found through a second attachment of the feed.
	var it domain.HappeningItem
	it.Apply(added)
	linked := it.Add(domain.ItemTarget{FeedID: feedA, OrganizationID: s.org, AttachmentID: uuid.New(), SourceID: uuid.New(), SourceType: domain.SourceSite},
		added.HappeningID, domain.Now())
	if len(linked) != 1 || linked[0].EventType() != "EventItemLinked" {
		t.Fatalf("second attachment decided %v", linked)
	}
	s.append(domain.HappeningItemStream(feedA, added.HappeningID), linked[0])
	// A marker item after it: once it arrives, anything the link caused
	// would have arrived too.
	markerID, _ := s.addItem(feedA, "marker")

	wait.Until(t, 20*time.Second, "both items at the catch-all receiver", func() bool { return len(all.requests()) == 2 })
	wait.Until(t, 20*time.Second, "both items at the feed A receiver", func() bool { return len(onlyA.requests()) == 2 })
	for name, rc := range map[string]*endpoint{"catch-all": all, "feed A": onlyA} {
		got := rc.requests()
		if got[0].Header.Get(webhook.HeaderEventID) == got[1].Header.Get(webhook.HeaderEventID) {
			t.Errorf("%s got one event twice", name)
		}
		ids := []string{got[0].Header.Get(webhook.HeaderEventID), got[1].Header.Get(webhook.HeaderEventID)}
		if !(ids[0] == eventID.String() && ids[1] == markerID.String() || ids[1] == eventID.String() && ids[0] == markerID.String()) {
			t.Errorf("%s got events %v, want %s and %s", name, ids, eventID, markerID)
		}
	}
	if n := len(onlyB.requests()); n != 0 {
		t.Errorf("the webhook of feed B got %d deliveries of feed A's items", n)
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("another organization's webhook got %d deliveries", n)
	}
}

func TestADisabledOrDeletedWebhookGetsNothingNew(t *testing.T) {
	s := newStack(t, testConfig())
	feed := uuid.New()
	disabled, deleted, live := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	d, _ := s.subscribe(disabled.URL)
	x, _ := s.subscribe(deleted.URL)
	s.subscribe(live.URL)
	ctx := context.Background()
	if _, _, err := s.cmds.UpdateWebhook(ctx, updateEnabled(s.org, d, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.cmds.DeleteWebhook(ctx, ref(s.org, x)); err != nil {
		t.Fatal(err)
	}
	s.addItem(feed, "after")
	wait.Until(t, 20*time.Second, "the live webhook's delivery", func() bool { return len(live.requests()) == 1 })
	if n := len(disabled.requests()) + len(deleted.requests()); n != 0 {
		t.Fatalf("disabled and deleted webhooks got %d deliveries", n)
	}
}

func TestFailedAttemptsAreRetriedUntilTheFifthThenTheDeliveryFails(t *testing.T) {
	cases := []struct {
		name    string
		receive func(t *testing.T) (url string, attempts func() int)
		wantErr string
	}{
		{"a receiver answering 500", func(t *testing.T) (string, func() int) {
			rc := newReceiver(t, func(int, *http.Request) int { return http.StatusInternalServerError })
			return rc.URL, func() int { return len(rc.requests()) }
		}, "answered HTTP 500"},
		{"a receiver answering a redirect, which is not followed", func(t *testing.T) (string, func() int) {
			rc := newReceiver(t, func(_ int, r *http.Request) int { return http.StatusFound })
			return rc.URL, func() int { return len(rc.requests()) }
		}, "redirects are not followed"},
		{"a receiver slower than the timeout", func(t *testing.T) (string, func() int) {
			rc := newReceiver(t, func(int, *http.Request) int { time.Sleep(400 * time.Millisecond); return http.StatusOK })
			return rc.URL, func() int { return len(rc.requests()) }
		}, "no answer within"},
		{"a receiver refusing connections", func(t *testing.T) (string, func() int) {
			rc := newReceiver(t, nil)
			url := rc.URL
			rc.Close()
			return url, func() int { return -1 }
		}, "connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.AttemptTimeout = 200 * time.Millisecond
			s := newStack(t, cfg)
			url, received := c.receive(t)
			hook, _ := s.subscribe(url)
			s.addItem(uuid.New(), "retried")
			d := s.awaitDelivery(hook, "the delivery to fail", failed)
			if len(d.Attempts) != webhook.MaxAttempts {
				t.Fatalf("%d attempts recorded, want %d", len(d.Attempts), webhook.MaxAttempts)
			}
			for i, a := range d.Attempts {
				if !strings.Contains(a.Error, c.wantErr) {
					t.Errorf("attempt %d error %q, want it to say %q", i+1, a.Error, c.wantErr)
				}
				if i > 0 && !a.At.After(d.Attempts[i-1].At) {
					t.Errorf("attempt %d at %v is not after attempt %d", i+1, a.At, i)
				}
			}
			if n := received(); n >= 0 && n != webhook.MaxAttempts {
				t.Errorf("the receiver got %d requests, want %d", n, webhook.MaxAttempts)
			}
			// No request must follow the last attempt: only time can show
			// that none comes.
			time.Sleep(200 * time.Millisecond)
			if n := received(); n >= 0 && n != webhook.MaxAttempts {
				t.Errorf("after failing, the receiver got %d requests, want %d", n, webhook.MaxAttempts)
			}
		})
	}
}

func TestAnItemIsMatchedAgainstTheSubscriptionsAsTheyStoodWhenItWasAdded(t *testing.T) {
	s := newStack(t, testConfig())
	s.stop() // everything below reaches the dispatcher in one batch
	ctx := context.Background()
	rc := newReceiver(t, nil)
	feed := uuid.New()
	before, _ := s.addItem(feed, "before the webhook")
	secretID, _, err := s.svc.Secrets().Create(ctx, s.org, uuid.Must(uuid.NewV7()))
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := s.cmds.CreateWebhook(ctx, commands.CreateWebhook{Org: s.org, SecretID: secretID, Config: domain.WebhookConfig{
		URL: rc.URL, Events: []string{domain.WebhookItemAdded}, EventFeedIDs: []uuid.UUID{},
	}})
	if err != nil {
		t.Fatal(err)
	}
	during, _ := s.addItem(feed, "while subscribed")
	if _, err := s.cmds.DeleteWebhook(ctx, ref(s.org, w.ID)); err != nil {
		t.Fatal(err)
	}
	after, _ := s.addItem(feed, "after the delete")
	// A marker to another webhook: once it arrives, the dispatcher is past
	// everything above.
	marker := newReceiver(t, nil)
	markerSecret, _, err := s.svc.Secrets().Create(ctx, s.org, uuid.Must(uuid.NewV7()))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.cmds.CreateWebhook(ctx, commands.CreateWebhook{Org: s.org, SecretID: markerSecret, Config: domain.WebhookConfig{
		URL: marker.URL, Events: []string{domain.WebhookItemAdded}, EventFeedIDs: []uuid.UUID{},
	}}); err != nil {
		t.Fatal(err)
	}
	s.addItem(feed, "marker")

	attach(t, s.db, testConfig())
	wait.Until(t, 20*time.Second, "the marker", func() bool { return len(marker.requests()) == 1 })
	var queued []uuid.UUID
	if err := s.db.Bun.NewRaw("SELECT event_id FROM webhook_deliveries WHERE webhook_id = ?", w.ID).Scan(ctx, &queued); err != nil {
		t.Fatal(err)
	}
	if len(queued) != 1 || queued[0] != during {
		t.Fatalf("queued %v; want only %s (not %s, added before, nor %s, after)", queued, during, before, after)
	}
}
