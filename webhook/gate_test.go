package webhook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// riverRunning reads whether a job client runs on the stack's database:
// River's elector takes the leadership as soon as a client starts, and
// gives it up when it stops.
func (s *stack) riverRunning() bool {
	s.t.Helper()
	var n int
	if err := s.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM river_leader`).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n > 0
}

// idleConfig stops the job client after a short idle spell.
func idleConfig() webhook.Config {
	cfg := testConfig()
	cfg.SenderIdle = 900 * time.Millisecond
	return cfg
}

func TestTheJobClientRunsOnlyWhileItHasDeliveriesToMake(t *testing.T) {
	s := newStack(t, idleConfig())

	// Nothing to send, nothing to housekeep: the client stays stopped.
	time.Sleep(time.Second)
	if s.riverRunning() {
		t.Fatal("the job client runs on an installation without webhooks")
	}

	rc := newReceiver(t, nil)
	s.subscribe(rc.URL + "/hooks")
	for i, title := range []string{"First delivery", "After an idle spell"} {
		// Once the client has had no job for its idle spell, it stops
		// (the webhook's first housekeeping starts it once too).
		wait.Until(t, 10*time.Second, "the job client to stop once idle", func() bool { return !s.riverRunning() })
		start := time.Now()
		s.addItem(uuid.New(), title)
		wait.Until(t, 20*time.Second, title, func() bool { return len(rc.requests()) == i+1 })
		t.Logf("%s delivered %v after its item was added, the job client stopped before", title, time.Since(start).Round(time.Millisecond))
	}
}

func TestARetryWaitingForItsTimeKeepsTheJobClientRunning(t *testing.T) {
	cfg := idleConfig()
	// The retry waits 1.5–4.5 s, longer than the client's idle spell.
	cfg.BackoffBase = 3 * time.Second
	s := newStack(t, cfg)
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 0 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	s.subscribe(rc.URL + "/hooks")
	s.addItem(uuid.New(), "Retried")
	wait.Until(t, 20*time.Second, "the first attempt", func() bool { return len(rc.requests()) == 1 })
	deadline := time.Now().Add(20 * time.Second)
	for len(rc.requests()) < 2 {
		if !s.riverRunning() {
			t.Fatal("the job client stopped while a retry waited for its time")
		}
		if time.Now().After(deadline) {
			t.Fatal("no retry within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestARedeliveryAnotherProcessQueuedStartsTheStoppedJobClient(t *testing.T) {
	s := newStack(t, idleConfig())
	rc := newReceiver(t, nil)
	hook, _ := s.subscribe(rc.URL + "/hooks")
	s.addItem(uuid.New(), "Delivered, then redelivered")
	first := s.awaitDelivery(hook, "the delivery", delivered)
	wait.Until(t, 10*time.Second, "the job client to stop once idle", func() bool { return !s.riverRunning() })

	// The API's process has no job client running and no gate: only the
	// webhooks role's gate can find its job.
	api, err := webhook.New(webhook.Parts{DB: s.db, Store: s.store, Commands: commands.New(s.store, nil),
		Queries: webhooks.NewQueries(s.db.Bun), Logger: servicetest.Logger()}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	start := time.Now()
	if _, err := api.Redeliver(context.Background(), s.org, hook, first.ID); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 20*time.Second, "the redelivery", func() bool { return len(rc.requests()) == 2 })
	t.Logf("redelivered %v after another process queued it", time.Since(start).Round(time.Millisecond))
}

func TestAProcessOnAnInstallationWithWebhooksHousekeepsAtOnce(t *testing.T) {
	s := newStack(t, testConfig())
	rc := newReceiver(t, nil)
	s.subscribe(rc.URL + "/hooks")
	s.stop()
	if _, err := s.db.Pool.Exec(context.Background(), `DELETE FROM river_job`); err != nil {
		t.Fatal(err)
	}

	// A process started later has no delivery to queue: its gate's first
	// look queues the hour's housekeeping, which River runs.
	again := attach(t, s.db, testConfig())
	var state string
	wait.Until(t, 10*time.Second, "the housekeeping to run", func() bool {
		err := s.db.Pool.QueryRow(context.Background(), `SELECT state FROM river_job WHERE kind = 'webhook_housekeep'`).Scan(&state)
		return err == nil && state == "completed"
	})
	again.org = s.org
	again.addItem(uuid.New(), "After the restart")
	wait.Until(t, 20*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
}
