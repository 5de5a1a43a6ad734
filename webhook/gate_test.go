package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/testkit/wait"
)

// riverRunning reads whether a job client runs on the stack's database:
// River's elector takes the leadership as soon as a client starts.
func (s *stack) riverRunning() bool {
	s.t.Helper()
	var n int
	if err := s.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM river_leader`).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n > 0
}

func TestTheJobClientStartsOnlyOnceTheInstallationHasAWebhook(t *testing.T) {
	s := newStack(t, testConfig())

	// The gate's first look ran at Start and found nothing: no webhook,
	// no delivery, no job. The client stays stopped.
	time.Sleep(time.Second)
	if s.riverRunning() {
		t.Fatal("the job client runs on an installation without webhooks")
	}

	// The next look is seconds away: only the dispatcher, projecting the
	// new webhook, can start the client this soon.
	rc := newReceiver(t, nil)
	start := time.Now()
	s.subscribe(rc.URL + "/hooks")
	wait.Until(t, 2*time.Second, "the job client to start after the first webhook", s.riverRunning)
	t.Logf("job client running %v after the webhook was created", time.Since(start).Round(time.Millisecond))

	s.addItem(uuid.New(), "First delivery")
	wait.Until(t, 20*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
}

func TestAProcessOnAnInstallationWithWebhooksStartsItsJobClientAtOnce(t *testing.T) {
	s := newStack(t, testConfig())
	rc := newReceiver(t, nil)
	s.subscribe(rc.URL + "/hooks")
	wait.Until(t, 2*time.Second, "the first process's job client", s.riverRunning)
	s.stop()
	if _, err := s.db.Pool.Exec(context.Background(), `DELETE FROM river_leader`); err != nil {
		t.Fatal(err)
	}

	// A process started later has no subscription change to project: its
	// gate's first look finds the webhook.
	again := attach(t, s.db, testConfig())
	again.org = s.org
	wait.Until(t, 2*time.Second, "the restarted process's job client", again.riverRunning)
	again.addItem(uuid.New(), "After the restart")
	wait.Until(t, 20*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
}
