package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// stack is the webhook machinery on a fresh database: the event store,
// commands, the webhooks read model and the dispatcher projecting, and a
// sender working, as the webhooks role runs them.
type stack struct {
	t       testing.TB
	dsn     string
	db      *database.DB
	store   *eventstore.Postgres
	cmds    *commands.Handler
	queries *webhooks.Queries
	svc     *webhook.Service
	waiter  *projections.Waiter
	org     uuid.UUID
	stop    func()
}

// testConfig is quick: small backoff, short timeouts, private addresses
// allowed (the receivers are local).
func testConfig() webhook.Config {
	return webhook.Config{BackoffBase: 20 * time.Millisecond, AllowPrivateNetworks: true, AttemptTimeout: 2 * time.Second}
}

func newStack(t testing.TB, cfg webhook.Config) *stack {
	t.Helper()
	db, dsn := testdb.New(t)
	s := attach(t, db, cfg)
	s.dsn = dsn
	return s
}

// attach runs the machinery over an existing database until stop or the
// end of the test.
func attach(t testing.TB, db *database.DB, cfg webhook.Config) *stack {
	t.Helper()
	m, err := run(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			if err := m.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &stack{t: t, db: db, store: m.store, cmds: m.cmds, queries: m.queries, svc: m.svc, waiter: m.waiter, org: uuid.New(), stop: stop}
}

// machinery is what the webhooks role runs, started.
type machinery struct {
	store   *eventstore.Postgres
	queries *webhooks.Queries
	cmds    *commands.Handler
	svc     *webhook.Service
	waiter  *projections.Waiter
	stop    func() error
}

func run(db *database.DB, cfg webhook.Config) (*machinery, error) {
	store := eventstore.NewPostgres(db.Pool)
	queries := webhooks.NewQueries(db.Bun)
	cmds := commands.New(store, readmodel.NewLookups(db.Bun))
	cfg.Work = true
	svc, err := webhook.New(webhook.Parts{DB: db, Store: store, Commands: cmds, Queries: queries, Logger: servicetest.Logger()}, cfg)
	if err != nil {
		return nil, err
	}
	runner, err := projections.NewRunner(store, db.Bun, servicetest.Logger(), projections.RunnerConfig{PollInterval: 20 * time.Millisecond},
		webhooks.Projector{}, svc.Dispatcher())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	<-runner.Running()
	if err := svc.Start(context.Background()); err != nil {
		cancel()
		return nil, err
	}
	stop := func() error {
		stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer stopCancel()
		err := svc.Stop(stopCtx)
		cancel()
		<-done
		svc.Close()
		return err
	}
	waiter := projections.NewWaiter(db.Bun, runner, 10*time.Second, webhooks.Projector{})
	return &machinery{store: store, queries: queries, cmds: cmds, svc: svc, waiter: waiter, stop: stop}, nil
}

// subscribe creates a webhook of the stack's organization and returns it
// with its secret.
func (s *stack) subscribe(url string, feeds ...uuid.UUID) (uuid.UUID, string) {
	s.t.Helper()
	ctx := context.Background()
	secretID, secret, err := s.svc.Secrets().Create(ctx, s.org, uuid.Must(uuid.NewV7()))
	if err != nil {
		s.t.Fatal(err)
	}
	if feeds == nil {
		feeds = []uuid.UUID{}
	}
	w, err := commands.Visible(ctx, s.waiter, func(ctx context.Context) (domain.WebhookState, commands.Result, error) {
		return s.cmds.CreateWebhook(ctx, commands.CreateWebhook{Org: s.org, SecretID: secretID, Config: domain.WebhookConfig{
			URL: url, Events: []string{domain.WebhookItemAdded}, EventFeedIDs: feeds,
		}})
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return w.ID, secret
}

// addItem records an event and its addition to a feed of the stack's
// organization, as ingestion does, and returns the id the deliveries carry
// as x-service-event-id.
func (s *stack) addItem(feed uuid.UUID, title string) (eventID uuid.UUID, item domain.HappeningItemAdded) {
	s.t.Helper()
	start := time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC)
	details, err := domain.NewHappeningDetails(domain.HappeningDetails{
		Identity: "https://example.com/events/" + uuid.NewString(), Title: title, Description: "<p>" + title + "</p>",
		Instances: []domain.HappeningInstance{{Key: "1", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}}}},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	now := domain.Now()
	var found domain.Happening
	discovered := found.Discover(uuid.New(), details, now)[0].(domain.HappeningDiscovered)
	s.append(domain.HappeningStream(discovered.HappeningID), discovered)
	var it domain.HappeningItem
	added := it.Add(domain.ItemTarget{FeedID: feed, OrganizationID: s.org, AttachmentID: uuid.New(), SourceID: uuid.New(), SourceType: domain.SourceSite},
		discovered.HappeningID, now)[0].(domain.HappeningItemAdded)
	return s.append(domain.HappeningItemStream(feed, discovered.HappeningID), added), added
}

func (s *stack) append(stream string, e domain.Event) uuid.UUID {
	s.t.Helper()
	data, err := domain.EncodeEvent(e)
	if err != nil {
		s.t.Fatal(err)
	}
	id := uuid.New()
	if _, err := s.store.AppendToStream(context.Background(), stream, eventstore.Any(),
		eventstore.EventData{ID: id, Type: e.EventType(), Data: data, Metadata: []byte(`{}`)}); err != nil {
		s.t.Fatal(err)
	}
	return id
}

// awaitDelivery waits until the webhook's one delivery satisfies cond, and
// returns it.
func (s *stack) awaitDelivery(hook uuid.UUID, what string, cond func(webhook.Delivery) bool) webhook.Delivery {
	s.t.Helper()
	var d webhook.Delivery
	wait.Until(s.t, 20*time.Second, what, func() bool {
		list, _, err := s.svc.Deliveries(context.Background(), s.org, hook, 10, 0)
		if err != nil || len(list) != 1 {
			return false
		}
		d = list[0]
		return cond(d)
	})
	return d
}

// delivery is one request a receiver got.
type delivery struct {
	Header http.Header
	Body   []byte
	At     time.Time
	Status int
}

// endpoint is a local webhook endpoint that records every request and
// answers what answer says (200 when nil).
type endpoint struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(n int, r *http.Request) int
	notify chan struct{}
}

func newReceiver(t testing.TB, answer func(n int, r *http.Request) int) *endpoint {
	rc := &endpoint{answer: answer, notify: make(chan struct{}, 1)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, delivery{Header: r.Header.Clone(), Body: b, At: time.Now()})
		rc.mu.Unlock()
		status := http.StatusOK
		if rc.answer != nil {
			status = rc.answer(n, r)
		}
		rc.mu.Lock()
		rc.got[n].Status = status
		rc.mu.Unlock()
		select {
		case rc.notify <- struct{}{}:
		default:
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *endpoint) requests() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %q is not JSON: %v", b, err)
	}
	return m
}

func ref(org, id uuid.UUID) commands.WebhookRef { return commands.WebhookRef{Org: org, ID: id} }

func updateEnabled(org, id uuid.UUID, enabled bool) commands.UpdateWebhook {
	return commands.UpdateWebhook{WebhookRef: ref(org, id), Update: domain.WebhookUpdate{Enabled: &enabled}}
}

func rotate(org, id, secretID uuid.UUID) commands.RotateWebhookSecret {
	return commands.RotateWebhookSecret{WebhookRef: ref(org, id), SecretID: secretID}
}

// clock is the sender's clock, moved by the test.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func newClock() *clock { return &clock{} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return domain.Now().Add(c.offset)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func delivered(d webhook.Delivery) bool { return d.Status == webhook.StatusDelivered }
func failed(d webhook.Delivery) bool    { return d.Status == webhook.StatusFailed }
func attempted(d webhook.Delivery) bool { return len(d.Attempts) >= 1 }
