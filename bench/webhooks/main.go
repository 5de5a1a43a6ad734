// Command webhooks measures webhook delivery: N item-added events to W
// webhooks with fast local receivers, run by the webhook machinery as the
// webhooks role of `feedsvc serve` runs it (the dispatcher projector with
// the default runner configuration, River, the sender).
//
//	go run ./bench/webhooks [-events 10000] [-webhooks 10] [-rate 0] [-db URL] [-peer=true] [-dispatch-only] [-cpuprofile FILE]
//
// With -peer (the default) the same run also measures River alone: as many
// no-op jobs shaped like deliveries, with the sender's River settings and
// pool, before and after the deliveries, and prints the ratio. The pools
// are those `feedsvc serve` gets from the default FEEDSVC_DB_MAX_CONNS.
// The CPU of the database's Postgres backends (from /proc, so Postgres
// must run on this machine) and of this process is given per delivery and
// per job.
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
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/bench/internal/systems"
	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/internal/database"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
	"github.com/feedsvc/feedsvc/service/schema"
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
	db         string
	events     int
	webhooks   int
	rate       float64
	writers    int
	keep       bool
	timeout    time.Duration
	peer       bool
	dispatch   bool
	cpuprofile string
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
	flag.BoolVar(&o.peer, "peer", true, "also run the River no-op peer (as many jobs, before and after)")
	flag.BoolVar(&o.dispatch, "dispatch-only", false, "only dispatch (queue the deliveries, send nothing): the dispatcher's share of the cost")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the delivery run")
	flag.Parse()

	_ = database.DropDatabase(ctx, o.db)
	// The pools as `feedsvc serve` sizes them with the default budget
	// (FEEDSVC_DB_MAX_CONNS, every role).
	budget, err := database.SplitBudget(database.DefaultMaxConns, true, true, false)
	if err != nil {
		return err
	}
	senderConns = budget.Sender
	mainDSN, err := database.WithPool(o.db, budget.Main, "")
	if err != nil {
		return err
	}
	db, err := schema.Open(ctx, mainDSN)
	if err != nil {
		return err
	}
	defer func() {
		db.Close()
		if !o.keep {
			_ = database.DropDatabase(context.Background(), o.db)
		}
	}()
	cpu, err := systems.NewBackendCPU(ctx, adminDSN(o.db), databaseName(o.db))
	if err != nil {
		return err
	}
	defer cpu.Close()
	load := loadavg()
	var peers []peer
	if o.peer {
		p, err := riverNoop(ctx, db, cpu, o.events*o.webhooks, 500*o.webhooks)
		if err != nil {
			return err
		}
		peers = append(peers, p)
		printPeer(p)
	}
	ours, err := deliver(ctx, o, db, cpu)
	if err != nil {
		return err
	}
	if o.peer {
		p, err := riverNoop(ctx, db, cpu, o.events*o.webhooks, 500*o.webhooks)
		if err != nil {
			return err
		}
		peers = append(peers, p)
		printPeer(p)
		var rate float64
		for _, p := range peers {
			rate += p.rate() / float64(len(peers))
		}
		fmt.Printf("ratio to River's no-op jobs (mean of the runs before and after): %.2f; Postgres CPU per delivery / per job: %.1fx (load %s at the start, %s at the end)\n",
			ours/rate, perUnit(oursPG, o.events*o.webhooks)/perUnit((peers[0].pgCPU+peers[1].pgCPU)/2, peers[0].jobs), load, loadavg())
	}
	return nil
}

// senderConns is the sender's pool as the default budget sizes it; the
// River peer's pool is the same.
var senderConns int

// oursPG is the Postgres CPU of the last delivery run (for the ratio).
var oursPG time.Duration

func perUnit(d time.Duration, n int) float64 { return float64(d) / float64(n) }

func printPeer(p peer) {
	fmt.Printf("river no-op peer: %d jobs in %s: %.0f jobs/s; CPU per job: Postgres %s, this process %s\n",
		p.jobs, p.elapsed.Round(time.Millisecond), p.rate(), (p.pgCPU / time.Duration(p.jobs)).Round(time.Microsecond),
		(p.goCPU / time.Duration(p.jobs)).Round(time.Microsecond))
}

// deliver runs the webhook machinery over the events and returns
// deliveries per second.
func deliver(ctx context.Context, o options, db *database.DB, cpu *systems.BackendCPU) (float64, error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := eventstore.NewPostgres(db.Pool)
	cmds := commands.New(store, readmodel.NewLookups(db.Bun))

	arrivals := newArrivals(o.events * o.webhooks)
	org, feed := uuid.New(), uuid.New()
	for range o.webhooks {
		srv := httptest.NewServer(arrivals)
		defer srv.Close()
		if err := subscribe(ctx, db, cmds, org, srv.URL); err != nil {
			return 0, err
		}
	}
	svc, err := webhook.New(webhook.Parts{DB: db, Store: store, Commands: cmds, Queries: webhooks.NewQueries(db.Bun), Logger: logger},
		webhook.Config{BackoffBase: time.Second, AllowPrivateNetworks: true, Work: true, SenderConns: senderConns})
	if err != nil {
		return 0, err
	}
	runner, err := projections.NewRunner(store, db.Bun, logger, projections.RunnerConfig{}, webhooks.Projector{}, svc.Dispatcher())
	if err != nil {
		return 0, err
	}
	runCtx, stopRunner := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(runCtx) }()
	<-runner.Running()
	if o.dispatch {
		defer func() { stopRunner(); <-done; svc.Close() }()
		return dispatchOnly(ctx, o, db, store, cpu, org, feed)
	}
	if err := svc.Start(context.WithoutCancel(ctx)); err != nil {
		stopRunner()
		return 0, err
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

	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 0, err
		}
		defer pprof.StopCPUProfile()
	}
	measured := measure(ctx, cpu, 200*time.Millisecond)
	start := time.Now()
	queued := make(chan time.Duration, 1)
	go func() {
		// When the dispatcher has queued every delivery: what is left
		// after it is the sender's.
		for ctx.Err() == nil {
			var n int
			if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries").Scan(&n); err == nil && n >= o.events*o.webhooks {
				queued <- time.Since(start)
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()
	appended, err := appendEvents(ctx, store, o, org, feed)
	if err != nil {
		return 0, err
	}
	appendTime := time.Since(start)
	fmt.Printf("appended %d events in %s (%.0f events/s)\n", o.events, appendTime.Round(time.Millisecond), float64(o.events)/appendTime.Seconds())
	select {
	case <-arrivals.all:
	case <-time.After(o.timeout):
		var queued, pending int
		_ = db.Bun.NewRaw("SELECT count(*), count(*) FILTER (WHERE status = 'pending') FROM webhook_deliveries").Scan(ctx, &queued, &pending)
		return 0, fmt.Errorf("only %d of %d deliveries arrived in %s (%d queued by the dispatcher, %d of them pending)",
			arrivals.count(), o.events*o.webhooks, o.timeout, queued, pending)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	elapsed := arrivals.last.Sub(start)
	// The last attempts' records and River's completions follow the
	// arrivals: their cost belongs to the run.
	for range 100 {
		var left int
		if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").Scan(&left); err != nil || left == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	pg, self := measured()
	oursPG = pg
	n := o.events * o.webhooks
	rate := float64(n) / elapsed.Seconds()
	fmt.Printf("delivered %d (%d events x %d webhooks) in %s: %.0f deliveries/s; CPU per delivery: Postgres %s, this process %s (appends and receivers included)\n",
		n, o.events, o.webhooks, elapsed.Round(time.Millisecond), rate, (pg / time.Duration(n)).Round(time.Microsecond), (self / time.Duration(n)).Round(time.Microsecond))
	select {
	case d := <-queued:
		fmt.Printf("every delivery queued by the dispatcher %s after the first append\n", d.Round(100*time.Millisecond))
	default:
	}
	lat := arrivals.latencies(appended)
	fmt.Printf("append to first attempt: p50 %s  p90 %s  p99 %s  max %s  (%d deliveries, %d requests)\n",
		pct(lat, 50), pct(lat, 90), pct(lat, 99), lat[len(lat)-1].Round(time.Millisecond), len(lat), arrivals.requests)
	return rate, nil
}

// dispatchOnly appends the events and waits until every delivery is
// queued, with the sender stopped.
func dispatchOnly(ctx context.Context, o options, db *database.DB, store *eventstore.Postgres, cpu *systems.BackendCPU, org, feed uuid.UUID) (float64, error) {
	measured := measure(ctx, cpu, 200*time.Millisecond)
	start := time.Now()
	if _, err := appendEvents(ctx, store, o, org, feed); err != nil {
		return 0, err
	}
	n := o.events * o.webhooks
	for {
		var queued int
		if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM webhook_deliveries").Scan(&queued); err != nil {
			return 0, err
		}
		if queued >= n {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	pg, self := measured()
	fmt.Printf("queued %d deliveries in %s: %.0f/s; CPU per delivery: Postgres %s, this process %s (appends included)\n",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), (pg / time.Duration(n)).Round(time.Microsecond), (self / time.Duration(n)).Round(time.Microsecond))
	return float64(n) / elapsed.Seconds(), nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func databaseName(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

func adminDSN(dsn string) string {
	out, err := database.WithDatabase(dsn, "postgres")
	if err != nil {
		return dsn
	}
	return out
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
	if _, err := appendEvent(ctx, store, domain.HappeningStream(found.HappeningID), uuid.New(), found); err != nil {
		return uuid.Nil, time.Time{}, err
	}
	var item domain.HappeningItem
	added := item.Add(domain.ItemTarget{FeedID: feed, OrganizationID: org, AttachmentID: uuid.New(), SourceID: found.SourceID, SourceType: domain.SourceSite},
		found.HappeningID, domain.Now())[0]
	id := uuid.New()
	at, err := appendEvent(ctx, store, domain.HappeningItemStream(feed, found.HappeningID), id, added)
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
