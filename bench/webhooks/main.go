// Command webhooks measures webhook delivery: N item-added events to W
// webhooks with fast local receivers, run by the webhook machinery as the
// webhooks role of `feedsvc serve` runs it (the dispatcher projector with
// the default runner configuration, River, the sender).
//
//	go run ./bench/webhooks [-events 10000] [-webhooks 10] [-rate 0] [-db URL]
//
// Appends go through the event store (an EventDiscovered and an
// EventItemAdded per event, 16 writers), at -rate events/s or as fast as
// the store takes them (0). It reports deliveries per second (every
// delivery acknowledged, from the first append to the last delivery's
// arrival) and, per delivery, the time from its event's append returning
// to the first attempt reaching the receiver. The database (default
// feedsvc_bench_webhooks on the local server) is created and dropped.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/internal/schema"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
	"github.com/feedsvc/feedsvc/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "webhooks:", err)
		os.Exit(1)
	}
}

type options struct {
	db       string
	events   int
	webhooks int
	rate     float64
	writers  int
	keep     bool
	timeout  time.Duration
}

func run(ctx context.Context) error {
	var o options
	flag.StringVar(&o.db, "db", "postgres://postgres@127.0.0.1:5432/feedsvc_bench_webhooks?sslmode=disable", "database (created, and dropped unless -keep)")
	flag.IntVar(&o.events, "events", 10_000, "item-added events")
	flag.IntVar(&o.webhooks, "webhooks", 10, "webhooks, each with its own receiver")
	flag.Float64Var(&o.rate, "rate", 0, "events appended per second (0: as fast as the store takes them)")
	flag.IntVar(&o.writers, "writers", 16, "concurrent appenders")
	flag.BoolVar(&o.keep, "keep", false, "keep the database")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest wait for every delivery")
	flag.Parse()

	_ = database.DropDatabase(ctx, o.db)
	db, err := schema.Open(ctx, o.db)
	if err != nil {
		return err
	}
	defer func() {
		db.Close()
		if !o.keep {
			_ = database.DropDatabase(context.Background(), o.db)
		}
	}()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := eventstore.NewPostgres(db.Pool)
	cmds := commands.New(store, readmodel.NewLookups(db.Bun))

	arrivals := newArrivals(o.events * o.webhooks)
	org, feed := uuid.New(), uuid.New()
	for range o.webhooks {
		srv := httptest.NewServer(arrivals)
		defer srv.Close()
		if err := subscribe(ctx, db, cmds, org, srv.URL); err != nil {
			return err
		}
	}
	svc, err := webhook.New(webhook.Parts{DB: db, Store: store, Commands: cmds, Queries: webhooks.NewQueries(db.Bun), Logger: logger},
		webhook.Config{BackoffBase: time.Second, AllowPrivateNetworks: true, Work: true})
	if err != nil {
		return err
	}
	runner, err := projections.NewRunner(store, db.Bun, logger, projections.RunnerConfig{}, webhooks.Projector{}, svc.Dispatcher())
	if err != nil {
		return err
	}
	runCtx, stopRunner := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(runCtx) }()
	<-runner.Running()
	if err := svc.Start(context.WithoutCancel(ctx)); err != nil {
		stopRunner()
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = svc.Stop(stopCtx)
		stopRunner()
		<-done
		svc.Close()
	}()
	time.Sleep(time.Second) // River's listener and producer settle

	start := time.Now()
	appended, err := appendEvents(ctx, store, o, org, feed)
	if err != nil {
		return err
	}
	appendTime := time.Since(start)
	fmt.Printf("appended %d events in %s (%.0f events/s)\n", o.events, appendTime.Round(time.Millisecond), float64(o.events)/appendTime.Seconds())
	select {
	case <-arrivals.all:
	case <-time.After(o.timeout):
		var queued, pending int
		_ = db.Bun.NewRaw("SELECT count(*), count(*) FILTER (WHERE status = 'pending') FROM webhook_deliveries").Scan(ctx, &queued, &pending)
		return fmt.Errorf("only %d of %d deliveries arrived in %s (%d queued by the dispatcher, %d of them pending)",
			arrivals.count(), o.events*o.webhooks, o.timeout, queued, pending)
	case <-ctx.Done():
		return ctx.Err()
	}
	elapsed := arrivals.last.Sub(start)
	n := o.events * o.webhooks
	fmt.Printf("delivered %d (%d events x %d webhooks) in %s: %.0f deliveries/s\n", n, o.events, o.webhooks, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())
	lat := arrivals.latencies(appended)
	fmt.Printf("append to first attempt: p50 %s  p90 %s  p99 %s  max %s  (%d deliveries, %d requests)\n",
		pct(lat, 50), pct(lat, 90), pct(lat, 99), lat[len(lat)-1].Round(time.Millisecond), len(lat), arrivals.requests)
	return nil
}

func subscribe(ctx context.Context, db *database.DB, cmds *commands.Handler, org uuid.UUID, url string) error {
	secretID, _, err := webhook.NewSecrets(db.Bun).Create(ctx, org, uuid.Must(uuid.NewV7()))
	if err != nil {
		return err
	}
	_, _, err = cmds.CreateWebhook(ctx, commands.CreateWebhook{Org: org, SecretID: secretID, Config: domain.WebhookConfig{
		URL: url, Events: []string{domain.WebhookItemAdded}, EventFeedIDs: []uuid.UUID{},
	}})
	return err
}

// appendEvents appends each event's discovery and its add to the feed, and
// returns when each add's append returned, by the id deliveries carry.
func appendEvents(ctx context.Context, store *eventstore.Postgres, o options, org, feed uuid.UUID) (map[uuid.UUID]time.Time, error) {
	var mu sync.Mutex
	appended := make(map[uuid.UUID]time.Time, o.events)
	jobs := make(chan int)
	errs := make(chan error, o.writers)
	var wg sync.WaitGroup
	for range o.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				id, at, err := appendOne(ctx, store, org, feed, i)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				appended[id] = at
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	var err error
feed:
	for i := range o.events {
		if o.rate > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(i) / o.rate * float64(time.Second)))))
		}
		select {
		case jobs <- i:
		case err = <-errs:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return appended, err
}

func appendOne(ctx context.Context, store *eventstore.Postgres, org, feed uuid.UUID, i int) (uuid.UUID, time.Time, error) {
	start := time.Date(2030, 1, 1, 18, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	details, err := domain.NewHappeningDetails(domain.HappeningDetails{
		Identity: fmt.Sprintf("https://bench.example/events/%d", i), Title: fmt.Sprintf("Event %d", i),
		Description: "<p>A benchmark event with a description of ordinary length for an event page.</p>",
		Instances:   []domain.HappeningInstance{{Key: "1", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: start}}}},
		URLs:        []string{fmt.Sprintf("https://bench.example/events/%d", i)},
	})
	if err != nil {
		return uuid.Nil, time.Time{}, err
	}
	var event domain.Happening
	found := event.Discover(uuid.New(), details, domain.Now())[0].(domain.HappeningDiscovered)
	if _, err := appendEvent(ctx, store, domain.HappeningStream(found.EventID), uuid.New(), found); err != nil {
		return uuid.Nil, time.Time{}, err
	}
	var item domain.HappeningItem
	added := item.Add(domain.ItemTarget{FeedID: feed, OrganizationID: org, AttachmentID: uuid.New(), SourceID: found.SourceID, SourceType: domain.SourceSite},
		found.EventID, domain.Now())[0]
	id := uuid.New()
	at, err := appendEvent(ctx, store, domain.HappeningItemStream(feed, found.EventID), id, added)
	return id, at, err
}

func appendEvent(ctx context.Context, store *eventstore.Postgres, stream string, id uuid.UUID, e domain.Event) (time.Time, error) {
	data, err := domain.EncodeEvent(e)
	if err != nil {
		return time.Time{}, err
	}
	_, err = store.AppendToStream(ctx, stream, eventstore.NoStream(), eventstore.EventData{ID: id, Type: e.EventType(), Data: data, Metadata: []byte(`{}`)})
	return time.Now(), err
}

// arrivals records when each (webhook, event) first reached a receiver.
type arrivals struct {
	mu       sync.Mutex
	first    map[[2]string]time.Time
	want     int
	requests int
	last     time.Time
	all      chan struct{}
}

func newArrivals(want int) *arrivals {
	return &arrivals{first: make(map[[2]string]time.Time, want), want: want, all: make(chan struct{})}
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	key := [2]string{r.Header.Get(webhook.HeaderWebhookID), r.Header.Get(webhook.HeaderEventID)}
	a.mu.Lock()
	a.requests++
	if _, ok := a.first[key]; !ok {
		a.first[key] = at
		a.last = at
		if len(a.first) == a.want {
			close(a.all)
		}
	}
	a.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.first)
}

func (a *arrivals) latencies(appended map[uuid.UUID]time.Time) []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]time.Duration, 0, len(a.first))
	for key, at := range a.first {
		if t0, ok := appended[uuid.MustParse(key[1])]; ok {
			out = append(out, at.Sub(t0))
		}
	}
	slices.Sort(out)
	return out
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[(len(sorted)-1)*p/100].Round(time.Millisecond)
}
