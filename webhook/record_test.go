package webhook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
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
