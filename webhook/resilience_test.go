package webhook_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// freeAddr is a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveAt moves a receiver onto addr, as a receiver coming back up.
func serveAt(t *testing.T, rc *endpoint, addr string) {
	t.Helper()
	rc.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(rc.Config.Handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
}

func TestAReceiverDownWhileTheServiceRestartsStillGetsTheEventsAfterwards(t *testing.T) {
	cfg := testConfig()
	cfg.BackoffBase = 300 * time.Millisecond
	s := newStack(t, cfg)
	addr := freeAddr(t)
	hook, _ := s.subscribe("http://" + addr + "/hook")
	beforeID, _ := s.addItem(uuid.New(), "before the restart")
	s.awaitDelivery(hook, "a failed first attempt", attempted)
	s.stop()
	// Added while nothing dispatches or sends.
	duringID, _ := s.addItem(uuid.New(), "during the restart")

	rc := newReceiver(t, nil)
	serveAt(t, rc, addr)
	restarted := attach(t, s.db, cfg)
	restarted.org = s.org

	wait.Until(t, 20*time.Second, "both events at the receiver", func() bool { return len(rc.requests()) == 2 })
	got := map[string]bool{}
	for _, r := range rc.requests() {
		got[r.Header.Get(webhook.HeaderEventID)] = true
	}
	if !got[beforeID.String()] || !got[duringID.String()] {
		t.Fatalf("the receiver got events %v, want %s and %s", got, beforeID, duringID)
	}
}

func TestAnEndpointResolvingToAPrivateAddressIsRefusedAtDialUnlessAllowed(t *testing.T) {
	rc := newReceiver(t, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rc.URL, "http://"))
	// A name, so creating it passes; what it resolves to is loopback.
	url := "http://localhost:" + port + "/hook"

	t.Run("refused by default", func(t *testing.T) {
		cfg := testConfig()
		cfg.AllowPrivateNetworks = false
		s := newStack(t, cfg)
		hook, _ := s.subscribe(url)
		s.addItem(uuid.New(), "to loopback")
		d := s.awaitDelivery(hook, "the delivery to fail", failed)
		for _, a := range d.Attempts {
			if !strings.Contains(a.Error, "non-public address") || a.StatusCode != nil {
				t.Errorf("attempt recorded as %+v, want a refused address", a)
			}
		}
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("the loopback receiver got %d requests", n)
		}
	})
	t.Run("delivered when allowed", func(t *testing.T) {
		s := newStack(t, testConfig())
		s.subscribe(url)
		s.addItem(uuid.New(), "to loopback")
		wait.Until(t, 20*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
	})
	t.Run("a literal private address is refused when subscribing", func(t *testing.T) {
		for _, u := range []string{"http://127.0.0.1:8080/", "http://10.1.2.3/", "http://[::1]/", "http://2130706433/", "http://169.254.169.254/"} {
			if _, err := domain.NewWebhookURL(u, domain.TargetPolicy{}); err == nil {
				t.Errorf("%s was accepted", u)
			}
			if _, err := domain.NewWebhookURL(u, domain.TargetPolicy{AllowPrivateNetworks: true}); err != nil {
				t.Errorf("%s was refused although private networks are allowed: %v", u, err)
			}
		}
	})
}

func TestAWebhookFailingEveryDeliveryForThreeDaysIsDisabledByTheServiceUntilReEnabled(t *testing.T) {
	s, clock, failing, rc, hook, deliveries := failedOnce(t)
	ctx := context.Background()
	clock.advance(71 * time.Hour)
	s.addItem(uuid.New(), "71 hours of failures")
	wait.Until(t, 20*time.Second, "the second delivery to fail", func() bool {
		l := deliveries()
		return len(l) == 2 && l[0].Status == webhook.StatusFailed
	})
	if w, _ := s.queries.Webhook(ctx, s.org, hook); !w.Enabled {
		t.Fatal("disabled before three days of failures")
	}

	clock.advance(time.Hour + time.Minute)
	s.addItem(uuid.New(), "three days of failures")
	wait.Until(t, 20*time.Second, "the webhook to be disabled", func() bool {
		w, err := s.queries.Webhook(ctx, s.org, hook)
		return err == nil && !w.Enabled
	})
	w, _ := s.queries.Webhook(ctx, s.org, hook)
	if w.EnabledBy != domain.EnabledBySystem || !strings.Contains(w.EnabledReason, "3 days") {
		t.Errorf("disabled by %q for %q; want the system, saying why", w.EnabledBy, w.EnabledReason)
	}
	wait.Until(t, 20*time.Second, "the pending delivery to be cancelled", func() bool {
		l := deliveries()
		return len(l) == 3 && l[0].Status == webhook.StatusCancelled
	})
	before := len(rc.requests())
	s.addItem(uuid.New(), "while disabled")
	marker := newReceiver(t, nil)
	other := *s
	other.org = s.org
	other.subscribe(marker.URL)
	s.addItem(uuid.New(), "marker")
	wait.Until(t, 20*time.Second, "the marker", func() bool { return len(marker.requests()) == 1 })
	if n := len(rc.requests()); n != before {
		t.Fatalf("a disabled webhook got %d more requests", n-before)
	}
	if n := len(deliveries()); n != 3 {
		t.Fatalf("%d deliveries; an item added while the webhook was disabled was queued", n)
	}

	// Re-enabled, with the clock as the commands' again: a fresh start.
	clock.advance(-72*time.Hour - time.Minute)
	failing.Store(false)
	if _, _, err := s.cmds.UpdateWebhook(ctx, updateEnabled(s.org, hook, true)); err != nil {
		t.Fatal(err)
	}
	s.addItem(uuid.New(), "after re-enabling")
	wait.Until(t, 20*time.Second, "a delivery after re-enabling", func() bool {
		l := deliveries()
		return len(l) == 4 && l[0].Status == webhook.StatusDelivered
	})
}

func TestASlowReceiverDoesNotDelayTheOthers(t *testing.T) {
	cfg := testConfig()
	cfg.PerHost, cfg.Concurrency = 2, 4
	s := newStack(t, cfg)
	// Two at a time, 1.5 s each: six requests take the slow one 4.5 s.
	slow := newReceiver(t, func(int, *http.Request) int { time.Sleep(1500 * time.Millisecond); return http.StatusOK })
	fast := newReceiver(t, nil)
	s.subscribe(slow.URL)
	s.subscribe(fast.URL)
	const items = 12
	for i := range items {
		s.addItem(uuid.New(), "item "+string(rune('a'+i)))
	}
	wait.Until(t, 20*time.Second, "every item at the fast receiver", func() bool { return len(fast.requests()) == items })
	if n := len(slow.requests()); n > items/2 {
		t.Fatalf("the slow receiver had %d of %d requests when the fast one had them all; want it far behind", n, items)
	}
	if n := len(slow.requests()); n == 0 {
		t.Fatal("the slow receiver got nothing: it was not delivered to alongside")
	}
}

// A success ends a webhook's failure streak: failures after it count from
// their own start, so 71 hours of failures, a success, then 2 hours of
// failures do not disable it (the streak is kept in webhook_health by the
// record statement, and ended by it).
func TestASuccessEndsTheFailureStreakSoLaterFailuresCountAfresh(t *testing.T) {
	s, clock, failing, _, hook, deliveries := failedOnce(t)
	ctx := context.Background()
	clock.advance(71 * time.Hour)
	failing.Store(false)
	s.addItem(uuid.New(), "a success after 71 hours of failures")
	wait.Until(t, 20*time.Second, "the success", func() bool {
		l := deliveries()
		return len(l) == 2 && l[0].Status == webhook.StatusDelivered
	})
	failing.Store(true)
	clock.advance(time.Minute)
	s.addItem(uuid.New(), "a new streak starts")
	wait.Until(t, 20*time.Second, "the third delivery to fail", func() bool {
		l := deliveries()
		return len(l) == 3 && l[0].Status == webhook.StatusFailed
	})
	clock.advance(2 * time.Hour)
	s.addItem(uuid.New(), "two hours into the new streak")
	wait.Until(t, 20*time.Second, "the fourth delivery to end", func() bool {
		l := deliveries()
		return len(l) == 4 && (l[0].Status == webhook.StatusFailed || l[0].Status == webhook.StatusCancelled)
	})
	if w, _ := s.queries.Webhook(ctx, s.org, hook); !w.Enabled || deliveries()[0].Status != webhook.StatusFailed {
		t.Fatalf("disabled (%s) 2 hours into a streak: the success did not end the one before", w.EnabledReason)
	}
}

// failedOnce starts a stack on a test clock with a webhook whose receiver
// rc answers 502 while failing is set (it is, at first), and waits for its
// first delivery to fail; deliveries lists the webhook's deliveries,
// newest first.
func failedOnce(t *testing.T) (s *stack, c *clock, failing *atomic.Bool, rc *endpoint, hook uuid.UUID, deliveries func() []webhook.Delivery) {
	t.Helper()
	c = newClock()
	cfg := testConfig()
	cfg.Now = c.now
	s = newStack(t, cfg)
	failing = new(atomic.Bool)
	failing.Store(true)
	rc = newReceiver(t, func(int, *http.Request) int {
		if failing.Load() {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	hook, _ = s.subscribe(rc.URL)
	deliveries = func() []webhook.Delivery {
		list, _, _ := s.svc.Deliveries(context.Background(), s.org, hook, 100, 0)
		return list
	}
	s.addItem(uuid.New(), "first failure")
	wait.Until(t, 20*time.Second, "the first delivery to fail", func() bool {
		l := deliveries()
		return len(l) == 1 && l[0].Status == webhook.StatusFailed
	})
	return s, c, failing, rc, hook, deliveries
}
