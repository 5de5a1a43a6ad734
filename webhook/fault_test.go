package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// childEnv makes the test binary a webhooks-role process instead of
// running tests, so the fault test can kill one with SIGKILL.
const childEnv = "FEEDSVC_WEBHOOK_TEST_CHILD_DSN"

func TestMain(m *testing.M) {
	if dsn := os.Getenv(childEnv); dsn != "" {
		if err := runChild(dsn); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// faultConfig makes a killed process's attempts come back soon: River
// rescues an attempt that looks running for longer than RescueAfter.
func faultConfig() webhook.Config {
	return webhook.Config{BackoffBase: 50 * time.Millisecond, AllowPrivateNetworks: true, AttemptTimeout: 2 * time.Second, RescueAfter: 8 * time.Second}
}

// runChild dispatches and sends until it is killed.
func runChild(dsn string) error {
	db, err := database.Open(context.Background(), dsn)
	if err != nil {
		return err
	}
	if _, err := run(db, faultConfig()); err != nil {
		return err
	}
	select {}
}

type child struct {
	cmd    *exec.Cmd
	output bytes.Buffer
}

func startChild(t *testing.T, dsn string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	c.cmd.Env = append(os.Environ(), childEnv+"="+dsn)
	c.cmd.Stdout, c.cmd.Stderr = &c.output, &c.output
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.kill() })
	return c
}

// kill ends the process at once: no attempt in flight gets to record
// itself, no lock is released but by the database noticing.
func (c *child) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

// ledger is a flaky receiver's memory: every request and every 2xx it
// answered, per event id.
type ledger struct {
	mu       sync.Mutex
	requests int
	seen     map[string]int
	failed   map[string]int
	acked    map[string]int
}

// answer fails one answer in three, but never one event more than twice,
// so that every event fits in five attempts even when a kill costs one.
func (l *ledger) answer(r *http.Request) int {
	id := r.Header.Get(webhook.HeaderEventID)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests++
	l.seen[id]++
	if l.requests%3 == 0 && l.failed[id] < 2 {
		l.failed[id]++
		return http.StatusInternalServerError
	}
	l.acked[id]++
	return http.StatusOK
}

func (l *ledger) ackedEvents() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

func TestKillingTheSenderMidRunLosesNothingAndRepeatsOnlyUnacknowledgedAttempts(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a process and waits for River to rescue its attempts")
	}
	const events = 1000
	s := newStack(t, faultConfig())
	l := &ledger{seen: map[string]int{}, failed: map[string]int{}, acked: map[string]int{}}
	rc := newReceiver(t, func(_ int, r *http.Request) int { return l.answer(r) })
	hook, _ := s.subscribe(rc.URL)
	// From here the parent only writes: the children dispatch and send.
	s.stop()

	first := startChild(t, s.dsn)
	feed := uuid.New()
	appended := make(chan []uuid.UUID, 1)
	go func() {
		ids := make([]uuid.UUID, 0, events)
		for i := range events {
			id, _ := s.addItem(feed, fmt.Sprintf("event %d", i))
			ids = append(ids, id)
		}
		appended <- ids
	}()
	wait.Until(t, 60*time.Second, "a third of the events acknowledged", func() bool { return l.ackedEvents() >= events/3 })
	first.kill()
	killedAt := l.ackedEvents()
	if killedAt >= events {
		t.Fatalf("every event was delivered before the kill; the test killed nothing mid-run")
	}
	second := startChild(t, s.dsn)
	ids := <-appended

	wait.Until(t, 120*time.Second, "every event acknowledged", func() bool { return l.ackedEvents() == events })
	// Let anything still queued show itself before counting duplicates.
	ctx := context.Background()
	wait.Until(t, 30*time.Second, "the queue to drain", func() bool {
		var pending int
		err := s.db.Bun.NewRaw("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").Scan(ctx, &pending)
		return err == nil && pending == 0
	})
	// A duplicate is a POST that may still come: no condition says it
	// will not, so only time can show it.
	time.Sleep(500 * time.Millisecond)
	second.kill()

	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if l.acked[id.String()] == 0 {
			t.Errorf("event %s was never delivered", id)
		}
	}
	// An extra acknowledgement is only allowed for an attempt the sender
	// never recorded: one the kill cut off after the receiver answered.
	var recorded []struct {
		EventID string `bun:"event_id"`
		Acks    int    `bun:"acks"`
	}
	if err := s.db.Bun.NewRaw(`SELECT d.event_id::text AS event_id, count(a.id) FILTER (WHERE a.status_code BETWEEN 200 AND 299) AS acks
		FROM webhook_deliveries d LEFT JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.webhook_id = ? GROUP BY d.event_id`,
		hook).Scan(ctx, &recorded); err != nil {
		t.Fatal(err)
	}
	if len(recorded) != events {
		t.Fatalf("%d deliveries recorded, want %d", len(recorded), events)
	}
	extra, unrecorded := 0, 0
	for _, r := range recorded {
		if r.Acks != 1 {
			t.Errorf("event %s has %d recorded acknowledgements, want 1", r.EventID, r.Acks)
		}
		extra += l.acked[r.EventID] - 1
		unrecorded += l.acked[r.EventID] - r.Acks
	}
	if extra > unrecorded {
		t.Errorf("%d duplicate deliveries, but only %d acknowledgements went unrecorded", extra, unrecorded)
	}
	// Unrecorded acknowledgements are attempts in flight at the kill.
	if unrecorded > webhook.DefaultConcurrency {
		t.Errorf("%d acknowledgements went unrecorded; at most %d attempts were in flight", unrecorded, webhook.DefaultConcurrency)
	}
	t.Logf("%d events, %d requests; killed after %d acknowledged; %d delivered twice (acknowledged while the sender died)",
		events, l.requests, killedAt, extra)
	if t.Failed() {
		t.Logf("first child:\n%s\nsecond child:\n%s", first.output.String(), second.output.String())
	}
}
