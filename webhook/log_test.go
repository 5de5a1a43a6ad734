package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/docs/webhooks/receiver"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

func TestTheDeliveryLogShowsEveryAttemptWithItsTimeStatusErrorAndDuration(t *testing.T) {
	s := newStack(t, testConfig())
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n < 2 {
			time.Sleep(30 * time.Millisecond) // a failed attempt that lasts, so its duration shows
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	hook, _ := s.subscribe(rc.URL)
	feed := uuid.New()
	eventID, added := s.addItem(feed, "logged")
	d := s.awaitDelivery(hook, "the delivery to succeed", delivered)
	if d.EventID != eventID || d.EventFeedID != feed || d.ItemID != added.ItemID || d.WebhookEvent != "event.item_added" || d.WebhookID != hook {
		t.Errorf("delivery %+v does not name its event, feed and item", d)
	}
	if len(d.Attempts) != 3 {
		t.Fatalf("%d attempts, want 3: %+v", len(d.Attempts), d.Attempts)
	}
	for i, a := range d.Attempts[:2] {
		if a.StatusCode == nil || *a.StatusCode != 503 || a.Error != "answered HTTP 503" || a.Duration < 30*time.Millisecond {
			t.Errorf("failed attempt %d recorded as %+v", i+1, a)
		}
	}
	last := d.Attempts[2]
	if last.StatusCode == nil || *last.StatusCode != 204 || last.Error != "" || last.Run != 1 {
		t.Errorf("the acknowledged attempt is recorded as %+v", last)
	}
	got := rc.requests()
	if len(got) != 3 {
		t.Fatalf("the receiver got %d requests, want 3", len(got))
	}
	for _, r := range got[1:] {
		if r.Header.Get(webhook.HeaderEventID) != got[0].Header.Get(webhook.HeaderEventID) || string(r.Body) != string(got[0].Body) {
			t.Errorf("a retry changed the event id or the body")
		}
	}
}

func TestRedeliverySendsTheSameEventAgainAndIsLogged(t *testing.T) {
	s := newStack(t, testConfig())
	rc := newReceiver(t, nil)
	hook, secret := s.subscribe(rc.URL)
	s.addItem(uuid.New(), "again")
	ctx := context.Background()
	first := s.awaitDelivery(hook, "the first delivery", delivered)

	again, err := s.svc.Redeliver(ctx, s.org, hook, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != webhook.StatusPending {
		t.Errorf("a redelivered delivery is %s, want pending", again.Status)
	}
	wait.Until(t, 20*time.Second, "the redelivery", func() bool { return len(rc.requests()) == 2 })
	got := rc.requests()
	if got[1].Header.Get(webhook.HeaderEventID) != got[0].Header.Get(webhook.HeaderEventID) || string(got[1].Body) != string(got[0].Body) {
		t.Errorf("the redelivery's event id or body differ from the delivery's")
	}
	if receiver.Verify(secret, got[1].Header.Get(webhook.HeaderSignature), got[1].Header.Get(webhook.HeaderTimestamp), got[1].Body, time.Now()) != nil {
		t.Errorf("the redelivery is not signed")
	}
	var d webhook.Delivery
	wait.Until(t, 20*time.Second, "the redelivery's log", func() bool {
		d, err = s.svc.Delivery(ctx, s.org, hook, first.ID)
		return err == nil && d.Status == webhook.StatusDelivered && len(d.Attempts) == 2
	})
	if d.Attempts[0].Run != 1 || d.Attempts[1].Run != 2 {
		t.Errorf("attempts are of runs %d and %d, want 1 and 2", d.Attempts[0].Run, d.Attempts[1].Run)
	}

	t.Run("of another organization's webhook is not found", func(t *testing.T) {
		_, err := s.svc.Redeliver(ctx, uuid.New(), hook, first.ID)
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("got %v, want not found", err)
		}
	})
	t.Run("of a delivery of another webhook is not found", func(t *testing.T) {
		other, _ := s.subscribe(rc.URL + "/other")
		_, err := s.svc.Redeliver(ctx, s.org, other, first.ID)
		var nf *domain.NotFoundError
		if !errors.As(err, &nf) || nf.Resource != "delivery" {
			t.Fatalf("got %v, want delivery not found", err)
		}
	})
}

func TestARedeliveryWhileTheDeliveryIsUnderWayIsAConflict(t *testing.T) {
	cfg := testConfig()
	cfg.BackoffBase = time.Hour // the failed first attempt waits, pending
	s := newStack(t, cfg)
	rc := newReceiver(t, func(int, *http.Request) int { return 500 })
	hook, _ := s.subscribe(rc.URL)
	s.addItem(uuid.New(), "pending")
	ctx := context.Background()
	d := s.awaitDelivery(hook, "the first attempt", attempted)
	_, err := s.svc.Redeliver(ctx, s.org, hook, d.ID)
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("redelivering a pending delivery answered %v, want a conflict", err)
	}
}

func TestAfterARotationBothSecretsSignFor24HoursThenOnlyTheNewOne(t *testing.T) {
	clock := newClock()
	cfg := testConfig()
	cfg.Now = clock.now
	s := newStack(t, cfg)
	rc := newReceiver(t, nil)
	hook, oldSecret := s.subscribe(rc.URL)
	ctx := context.Background()
	newID, newSecret, err := s.svc.Secrets().Create(ctx, s.org, uuid.Must(uuid.NewV7()))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.cmds.RotateWebhookSecret(ctx, rotate(s.org, hook, newID)); err != nil {
		t.Fatal(err)
	}
	if newSecret == oldSecret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("rotation made secret %q from %q", newSecret, oldSecret)
	}
	s.addItem(uuid.New(), "during the grace")
	wait.Until(t, 20*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
	r := rc.requests()[0]
	sigs := strings.Fields(r.Header.Get(webhook.HeaderSignature))
	ts := r.Header.Get(webhook.HeaderTimestamp)
	if len(sigs) != 2 {
		t.Fatalf("signature header %q, want two signatures", r.Header.Get(webhook.HeaderSignature))
	}
	at := clock.now()
	if receiver.Verify(newSecret, sigs[0], ts, r.Body, at) != nil || receiver.Verify(oldSecret, sigs[1], ts, r.Body, at) != nil {
		t.Fatalf("the signatures are not the new secret's then the old one's")
	}

	clock.advance(24*time.Hour + time.Second)
	s.addItem(uuid.New(), "after the grace")
	wait.Until(t, 20*time.Second, "the second delivery", func() bool { return len(rc.requests()) == 2 })
	r = rc.requests()[1]
	ts = r.Header.Get(webhook.HeaderTimestamp)
	if sig := r.Header.Get(webhook.HeaderSignature); strings.Contains(sig, " ") ||
		receiver.Verify(newSecret, sig, ts, r.Body, clock.now()) != nil || receiver.Verify(oldSecret, sig, ts, r.Body, clock.now()) == nil {
		t.Fatalf("after 24 hours the header is %q; want the new secret's signature alone", sig)
	}
}
