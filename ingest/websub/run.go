package websub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/feedsvc/feedsvc/ingest"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawl"
	"github.com/feedsvc/feedsvc/internal/backoff"
	"github.com/feedsvc/feedsvc/internal/pgnotify"
)

const (
	// batch is how many subscriptions or pushes one pass takes.
	batch = 20
	// pushesAtOnce is how many pushes are ingested concurrently.
	pushesAtOnce = 4
	// maxFailures is how many failed requests a subscription that no feed
	// has any more gets before it is forgotten without the hub's word.
	maxFailures = 5
	// maxPushAttempts bounds the failed ingestions of one push; a push
	// waiting on a poll (ingest.ErrSourceBusy) is kept up to maxPushAge.
	maxPushAttempts = 5
	maxPushAge      = time.Hour
	// busyWait is how soon a push waiting on a poll is tried again.
	busyWait = 250 * time.Millisecond
	// pushFallback is how often the queue of pushes is looked at while
	// nothing says to: it finds what no notification announced (a push
	// another process requeued, or left behind when it died).
	pushFallback = time.Minute
)

// pushLook is what Run knows of the queue of pushes, to look at it only
// when something may be there (lookForPushes).
type pushLook struct {
	// listener tells of pushes queued anywhere (HearPushes); nil or not
	// listening, the queue is looked at every tick.
	listener *pgnotify.Listener
	// heard: a push was queued (or listening started) since the last take.
	heard atomic.Bool
	mu    sync.Mutex
	// requeued is the earliest not_before of the pushes this process
	// requeued and has not taken since (zero for none); last is when the
	// last take ran, and failed whether it failed.
	requeued time.Time
	last     time.Time
	failed   bool
}

// requeuedAt notes a push requeued to be taken at due.
func (p *pushLook) requeuedAt(due time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.requeued.IsZero() || due.Before(p.requeued) {
		p.requeued = due
	}
}

// Run does the crawler's part until ctx ends: ingest queued pushes and,
// when the service has a public URL, send subscription requests, renewals
// and unsubscriptions as they fall due (every tick, and at once when a
// feed names a new hub). The queue of pushes is taken at once when a push
// is queued (received here, or by another process while the listener
// tells of it: PushesChannel), when a push this process requeued is due,
// while not told of pushes every tick, and else once every pushFallback.
// Database errors are logged and retried at the next tick.
func (s *Subscriber) Run(ctx context.Context, ingester Ingester) error {
	s.log.Info("websub subscriber running", "subscribing", s.Enabled(), "lease_seconds", s.cfg.LeaseSeconds)
	ticker := time.NewTicker(s.cfg.Tick)
	defer ticker.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, pushesAtOnce)
	ticked := true
	for {
		if s.Enabled() {
			if err := s.manage(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("websub: managing subscriptions failed", "err", err)
			}
		}
		if s.lookForPushes(ticked) {
			if err := s.takePushes(ctx, ingester, sem, &wg); err != nil && ctx.Err() == nil {
				s.log.Warn("websub: taking pushes failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			ticked = true
		case <-s.wake:
			ticked = false
		}
	}
}

// lookForPushes says whether this turn of Run (a tick's when ticked) takes
// the queue of pushes: when told of one, and at a tick also while not
// being told (the listener not listening), after a failed take, when a
// push this process requeued is due, and once every pushFallback. A true
// answer takes the notification and the requeued push: the take that
// follows finds them.
func (s *Subscriber) lookForPushes(ticked bool) bool {
	p := &s.pushes
	if p.heard.Swap(false) {
		return true
	}
	if !ticked {
		return false
	}
	now := s.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	due := !p.listener.Listening() || p.failed || now.Sub(p.last) >= pushFallback
	if !p.requeued.IsZero() && !now.Before(p.requeued) {
		p.requeued, due = time.Time{}, true
	}
	return due
}

// tookPushes records a take's outcome for lookForPushes.
func (s *Subscriber) tookPushes(at time.Time, err error) {
	s.pushes.mu.Lock()
	defer s.pushes.mu.Unlock()
	s.pushes.last, s.pushes.failed = at, err != nil
}

// subscription is a row the loop acts on.
type subscription struct {
	ID          string     `bun:"id"`
	SourceID    uuid.UUID  `bun:"source_id"`
	Topic       string     `bun:"topic"`
	Hub         string     `bun:"hub"`
	Secret      string     `bun:"secret"`
	State       string     `bun:"state"`
	PendingMode *string    `bun:"pending_mode"`
	Failures    int        `bun:"failures"`
	VerifiedAt  *time.Time `bun:"verified_at"`
	Attached    bool       `bun:"attached"`
}

// manage takes the subscriptions that are due (next_at passed, or no feed
// has the source any more and no unsubscription is under way) and acts on
// each: subscribe (first time, after a denial or an unverified request, and
// to renew a lease at nine tenths of it) while a feed has the source, else
// unsubscribe. Finding the detached ones reads every subscription each
// tick, one anti-join on ingest_attachments' source index: there are as
// many as sources whose feeds name a hub. Taking a row moves its next_at past VerifyWait in the same
// statement, so two crawler processes never act on one row at once.
func (s *Subscriber) manage(ctx context.Context) error {
	for {
		var due []subscription
		err := s.db.NewRaw(`UPDATE websub_subscriptions s SET next_at = now() + ? * interval '1 millisecond'
			WHERE s.id IN (SELECT id FROM websub_subscriptions d
				WHERE d.next_at <= now() OR (d.pending_mode IS DISTINCT FROM 'unsubscribe'
					AND NOT EXISTS (SELECT 1 FROM ingest_attachments a WHERE a.source_id = d.source_id))
				ORDER BY d.next_at LIMIT ? FOR UPDATE SKIP LOCKED)
			RETURNING s.id, s.source_id, s.topic, s.hub, s.secret, s.state, s.pending_mode, s.failures, s.verified_at,
				EXISTS (SELECT 1 FROM ingest_attachments a WHERE a.source_id = s.source_id) AS attached`,
			s.cfg.VerifyWait.Milliseconds(), batch).Scan(ctx, &due)
		if err != nil {
			return fmt.Errorf("take due subscriptions: %w", err)
		}
		for _, sub := range due {
			if ctx.Err() != nil {
				return nil
			}
			s.act(ctx, sub)
		}
		if len(due) < batch {
			return nil
		}
	}
}

func (s *Subscriber) act(ctx context.Context, sub subscription) {
	if sub.Attached {
		s.request(ctx, sub, "subscribe")
		return
	}
	if sub.VerifiedAt == nil && (sub.PendingMode == nil || *sub.PendingMode != "subscribe") {
		// Never asked for, or never granted: nothing to undo at the hub.
		s.forget(ctx, sub, "no feed has the source")
		return
	}
	if sub.Failures >= maxFailures {
		s.forget(ctx, sub, "the hub did not confirm the unsubscription")
		return
	}
	s.request(ctx, sub, "unsubscribe")
}

// request sends a subscription request (subscribe or unsubscribe),
// recorded first as the one to confirm when the hub verifies intent: a
// hub may verify before its answer to the request arrives here. A renewal
// leaves the subscription active meanwhile. An unsubscription counts as a
// failure until verified, so that a hub that never confirms it does not
// keep the row forever.
func (s *Subscriber) request(ctx context.Context, sub subscription, mode string) {
	if _, err := s.db.NewRaw(`UPDATE websub_subscriptions SET pending_mode = ?, requested_at = now(),
		failures = CASE WHEN ? = 'unsubscribe' THEN failures + 1 ELSE failures END
		WHERE id = ?`, mode, mode, sub.ID).Exec(ctx); err != nil {
		s.log.Warn("websub: recording a request failed", "subscription", sub.ID, "err", err)
		return
	}
	err := s.send(ctx, sub, mode)
	s.metrics.requests.WithLabelValues(mode, outcomeLabel(err)).Inc()
	if err != nil {
		delay := backoff.Delay(sub.Failures+1, s.cfg.RetryBase, s.cfg.RetryMax)
		s.log.Warn("websub: hub request failed", "subscription", sub.ID, "mode", mode, "hub", sub.Hub,
			"failures", sub.Failures+1, "retry_in", delay.Round(time.Second), "err", err)
		if _, uerr := s.db.NewRaw(`UPDATE websub_subscriptions SET failures = ?, last_error = ?,
			next_at = now() + ? * interval '1 millisecond' WHERE id = ?`,
			sub.Failures+1, truncate(err.Error(), 500), delay.Milliseconds(), sub.ID).Exec(ctx); uerr != nil {
			s.log.Warn("websub: recording a failed request failed", "subscription", sub.ID, "err", uerr)
		}
		return
	}
	// The hub verifies asynchronously; if it does not within VerifyWait
	// (the row's next_at since it was taken), the request is sent again.
	s.log.Info("websub: hub accepted the request", "subscription", sub.ID, "mode", mode, "hub", sub.Hub, "topic", sub.Topic)
}

// send is the subscription request itself: a form POST to the hub, which
// answers 202 Accepted when it will verify intent (any 2xx is taken so).
func (s *Subscriber) send(ctx context.Context, sub subscription, mode string) error {
	form := url.Values{
		"hub.mode":     {mode},
		"hub.topic":    {sub.Topic},
		"hub.callback": {s.callbackURL(sub.ID)},
	}
	if mode == "subscribe" {
		form.Set("hub.lease_seconds", strconv.Itoa(s.cfg.LeaseSeconds))
		form.Set("hub.secret", sub.Secret)
	}
	reqCtx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, sub.Hub, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", crawl.DefaultUserAgent)
	resp, err := s.hub.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", mode, sub.Hub, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s %s: hub answered HTTP %d", mode, sub.Hub, resp.StatusCode)
	}
	return nil
}

func outcomeLabel(err error) string {
	if err != nil {
		return "failed"
	}
	return "accepted"
}

// forget removes a subscription without the hub's word.
func (s *Subscriber) forget(ctx context.Context, sub subscription, why string) {
	if _, err := s.db.NewRaw(`DELETE FROM websub_subscriptions WHERE id = ?`, sub.ID).Exec(ctx); err != nil {
		s.log.Warn("websub: forgetting a subscription failed", "subscription", sub.ID, "err", err)
		return
	}
	s.log.Info("websub: subscription forgotten", "subscription", sub.ID, "hub", sub.Hub, "topic", sub.Topic, "why", why)
}

// queued is a push taken from websub_pushes, with its subscription.
type queued struct {
	ID         int64     `bun:"id"`
	SubID      string    `bun:"subscription_id"`
	Body       []byte    `bun:"body"`
	Attempts   int       `bun:"attempts"`
	ReceivedAt time.Time `bun:"received_at"`
	SourceID   uuid.UUID `bun:"source_id"`
	Topic      string    `bun:"topic"`
}

// takePushesSQL takes up to $1 due pushes (takePushes). It is a fixed
// text run through pgx with a bound argument, so that each connection
// prepares it once.
const takePushesSQL = `WITH t AS (DELETE FROM websub_pushes WHERE id IN (
		SELECT id FROM websub_pushes WHERE not_before <= now() ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
	RETURNING id, subscription_id, body, attempts, received_at)
	SELECT t.id, t.subscription_id, t.body, t.attempts, t.received_at, s.source_id, s.topic
	FROM t JOIN websub_subscriptions s ON s.id = t.subscription_id`

// takePushes takes the queued pushes that are due, each by deleting it
// (so one process takes it), and ingests them, pushesAtOnce at a time. It
// takes again as long as a take finds a full batch.
func (s *Subscriber) takePushes(ctx context.Context, ingester Ingester, sem chan struct{}, wg *sync.WaitGroup) (err error) {
	if ingester == nil {
		return nil
	}
	start := s.now()
	defer func() { s.tookPushes(start, err) }()
	for {
		rows, err := s.pool.Query(ctx, takePushesSQL, batch)
		var taken []queued
		if err == nil {
			taken, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (queued, error) {
				var p queued
				err := row.Scan(&p.ID, &p.SubID, &p.Body, &p.Attempts, &p.ReceivedAt, &p.SourceID, &p.Topic)
				return p, err
			})
		}
		if err != nil {
			return fmt.Errorf("take pushes: %w", err)
		}
		for _, p := range taken {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				s.requeue(context.WithoutCancel(ctx), p, 0)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				s.ingest(ctx, ingester, p)
			}()
		}
		if len(taken) < batch {
			return nil
		}
	}
}

// ingest parses a push as the subscription's feed and hands its entries
// to the crawler.
func (s *Subscriber) ingest(ctx context.Context, ingester Ingester, p queued) {
	start := s.now()
	found, err := crawl.PushedCandidates(p.Topic, p.Body)
	if err != nil {
		// Not a feed we can read: nothing to retry.
		s.log.Warn("websub: pushed content is no feed", "subscription", p.SubID, "source_id", p.SourceID, "err", err)
		s.metrics.ingested.WithLabelValues("unreadable").Inc()
		return
	}
	cands := make([]connector.Candidate, len(found))
	for i, c := range found {
		cands[i] = connector.Candidate{URL: c.URL, Title: c.Title, Description: c.Description, ImageURL: c.ImageURL,
			PublishedAt: c.PublishedAt, LastMod: c.LastMod}
	}
	res, err := ingester.IngestPushed(ctx, p.SourceID, cands)
	switch {
	case errors.Is(err, ingest.ErrSourceBusy):
		if s.now().Sub(p.ReceivedAt) > maxPushAge {
			s.log.Warn("websub: push dropped: its source stayed busy", "subscription", p.SubID, "source_id", p.SourceID)
			s.metrics.ingested.WithLabelValues("dropped").Inc()
			return
		}
		s.requeue(ctx, p, 0)
	case err != nil && ctx.Err() != nil:
		s.requeue(context.WithoutCancel(ctx), p, 0)
	case err != nil:
		if p.Attempts+1 >= maxPushAttempts {
			s.log.Warn("websub: push dropped after repeated failures; polling will find its entries",
				"subscription", p.SubID, "source_id", p.SourceID, "err", err)
			s.metrics.ingested.WithLabelValues("dropped").Inc()
			return
		}
		s.log.Warn("websub: ingesting a push failed; will retry", "subscription", p.SubID, "source_id", p.SourceID, "err", err)
		s.requeue(ctx, p, 1)
	default:
		s.metrics.ingested.WithLabelValues("ingested").Inc()
		s.metrics.latency.Observe(s.now().Sub(p.ReceivedAt).Seconds())
		s.log.Info("websub: push ingested", "subscription", p.SubID, "source_id", p.SourceID, "entries", len(cands),
			"new_articles", res.NewArticles, "items_added", res.Items, "duration", s.now().Sub(start).Round(time.Millisecond))
	}
}

// requeue puts a taken push back, to be taken again after a while: by Run
// once that while has passed (pushes.requeued; nothing notifies of a
// requeued push), or by any process's fallback look should this one stop.
func (s *Subscriber) requeue(ctx context.Context, p queued, failed int) {
	wait := busyWait
	if failed > 0 {
		wait = backoff.Delay(p.Attempts+1, time.Second, time.Minute)
	}
	if _, err := s.db.NewRaw(`INSERT INTO websub_pushes (subscription_id, body, attempts, not_before, received_at)
		VALUES (?, ?, ?, now() + ? * interval '1 millisecond', ?)`,
		p.SubID, p.Body, p.Attempts+failed, wait.Milliseconds(), p.ReceivedAt).Exec(ctx); err != nil {
		s.log.Warn("websub: requeueing a push failed; polling will find its entries", "subscription", p.SubID, "err", err)
		return
	}
	// Counted from after the insert, whose now() came before: the push is
	// due by then (on one clock; with the database's clock behind this
	// one's, the fallback look finds it).
	s.pushes.requeuedAt(s.now().Add(wait))
}
