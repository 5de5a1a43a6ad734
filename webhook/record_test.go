package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// An acknowledged attempt whose record the database refuses for a moment
// is recorded once the database takes it, and never sent again (issue 26:
// a refused attempt record caused 5 duplicate POSTs). The refusal here is
// a constraint every new attempt row fails, held for a second while the
// receiver acknowledges.
func TestAnAttemptWhoseRecordFailsIsNotSentAgain(t *testing.T) {
	s := newStack(t, testConfig())
	ctx := context.Background()
	refuse := func(on bool) {
		stmt := "ALTER TABLE webhook_attempts DROP CONSTRAINT IF EXISTS refuse_all"
		if on {
			stmt = "ALTER TABLE webhook_attempts ADD CONSTRAINT refuse_all CHECK (false) NOT VALID"
		}
		if _, err := s.db.Pool.Exec(ctx, stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 0 {
			refuse(true)
			time.AfterFunc(time.Second, func() { refuse(false) })
		}
		return http.StatusOK
	})
	hook, _ := s.subscribe(rc.URL + "/hooks")
	s.addItem(uuid.New(), "Jazz night")
	d := s.awaitDelivery(hook, "the delivery recorded as delivered", delivered)
	// River's retries come within 20 ms to a second (testConfig): give a
	// wrong second POST the time to arrive.
	time.Sleep(2 * time.Second)
	if got := len(rc.requests()); got != 1 {
		t.Fatalf("the receiver got %d POSTs; want 1", got)
	}
	if len(d.Attempts) != 1 || d.Attempts[0].StatusCode == nil || *d.Attempts[0].StatusCode != 200 {
		t.Fatalf("attempts %+v; want one, answered 200", d.Attempts)
	}
}

// A delivery whose attempt was sent but whose record the database refused
// past the sender's patience is not left pending for ever: housekeeping
// marks it unknown, and it can then be redelivered (a pending delivery
// cannot), once. Before, it stayed pending and redeliver refused it.
func TestADeliveryWhoseRecordNeverLandsBecomesUnknownAndCanBeRedelivered(t *testing.T) {
	cfg := testConfig()
	cfg.RecordPatience = 300 * time.Millisecond
	s := newStack(t, cfg)
	ctx := context.Background()
	refuse := func(on bool) {
		stmt := "ALTER TABLE webhook_attempts DROP CONSTRAINT IF EXISTS refuse_all"
		if on {
			stmt = "ALTER TABLE webhook_attempts ADD CONSTRAINT refuse_all CHECK (false) NOT VALID"
		}
		if _, err := s.db.Pool.Exec(ctx, stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 0 {
			refuse(true)
		}
		return http.StatusOK
	})
	hook, _ := s.subscribe(rc.URL + "/hooks")
	s.addItem(uuid.New(), "Jazz night")
	wait.Until(t, 20*time.Second, "the delivery's job to give up recording its attempt", func() bool {
		var state string
		err := s.db.Pool.QueryRow(ctx, "SELECT state FROM river_job WHERE kind = 'webhook_delivery'").Scan(&state)
		return err == nil && state == "cancelled"
	})
	refuse(false)
	d := s.awaitDelivery(hook, "the delivery", func(webhook.Delivery) bool { return true })
	if d.Status != webhook.StatusPending || len(d.Attempts) != 0 {
		t.Fatalf("before housekeeping the delivery is %s with attempts %+v; want pending, none recorded", d.Status, d.Attempts)
	}
	var conflict *domain.ConflictError
	if _, err := s.svc.Redeliver(ctx, s.org, hook, d.ID); !errors.As(err, &conflict) {
		t.Fatalf("redeliver a pending delivery: %v; want a conflict", err)
	}
	if err := s.svc.Housekeep(ctx); err != nil {
		t.Fatal(err)
	}
	d = s.awaitDelivery(hook, "the delivery", func(webhook.Delivery) bool { return true })
	if d.Status != webhook.StatusUnknown {
		t.Fatalf("after housekeeping the delivery is %s; want %s", d.Status, webhook.StatusUnknown)
	}
	if _, err := s.svc.Redeliver(ctx, s.org, hook, d.ID); err != nil {
		t.Fatalf("redeliver an unknown delivery: %v", err)
	}
	d = s.awaitDelivery(hook, "the redelivery recorded as delivered", delivered)
	if got := len(rc.requests()); got != 2 {
		t.Fatalf("the receiver got %d POSTs; want 2 (the unrecorded attempt and the redelivery)", got)
	}
	if len(d.Attempts) != 1 || d.Attempts[0].Run != 2 {
		t.Fatalf("attempts %+v; want one, of run 2", d.Attempts)
	}
	// A delivery whose job is alive is never judged: housekeeping leaves
	// it be.
	if err := s.svc.Housekeep(ctx); err != nil {
		t.Fatal(err)
	}
	if d = s.awaitDelivery(hook, "the delivery", func(webhook.Delivery) bool { return true }); d.Status != webhook.StatusDelivered {
		t.Fatalf("housekeeping changed a delivered delivery to %s", d.Status)
	}
}
