package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/backoff"
)

// deliveryWorker makes one attempt of a delivery per River job attempt.
type deliveryWorker struct {
	river.WorkerDefaults[deliveryArgs]
	svc *Service
}

// NextRetry is exponential backoff with ±50 % jitter from the configured
// base: base, 2·base, 4·base, 8·base between the five attempts.
func (w *deliveryWorker) NextRetry(job *river.Job[deliveryArgs]) time.Time {
	return time.Now().Add(backoff.Delay(job.Attempt, w.svc.cfg.BackoffBase, maxRetryDelay))
}

// hostWait is how long an attempt waits for a slot of its receiver's host
// before it steps aside (snoozes, which costs no attempt) so that the
// process's slots serve other receivers.
const hostWait = 50 * time.Millisecond

func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	s := w.svc
	now := s.cfg.Now()
	a, err := s.loadAttempt(ctx, job.Args.DeliveryID)
	if errors.Is(err, sql.ErrNoRows) {
		return river.JobCancel(fmt.Errorf("delivery %s is gone", job.Args.DeliveryID))
	}
	switch {
	case err != nil:
		return err
	case a.Runs > job.Args.Run || a.Runs == job.Args.Run && a.Status == StatusDelivered:
		// Already acknowledged (the process that recorded it died before
		// River completed the job) or redelivered since: nothing to send.
		return nil
	case a.URL == nil:
		return s.cancel(ctx, a.ID, "webhook deleted")
	case !*a.Enabled:
		return s.cancel(ctx, a.ID, "webhook disabled")
	case len(a.Secrets) == 0:
		return fmt.Errorf("webhook %s has no signing secret", a.WebhookID)
	}
	release, ok := s.sender.hosts.acquire(ctx, *a.URL, hostWait)
	if !ok {
		return river.JobSnooze(time.Duration(100+rand.IntN(400)) * time.Millisecond)
	}
	res := func() Result {
		defer release()
		return s.sender.Send(ctx, Request{
			URL: *a.URL, WebhookID: a.WebhookID.String(), EventID: a.EventID.String(), Body: []byte(a.Body), Secrets: a.Secrets, At: now,
		})
	}()
	last := job.Attempt >= job.MaxAttempts
	failingSince, err := s.recordSent(ctx, a, job.Args.Run, now, res, last)
	if err != nil {
		// Sent but not recorded: failing the job would make River run it
		// again and POST the same body again (issue 26: a refused record
		// caused 5 duplicate POSTs). The job ends here instead, the
		// delivery still pending; the log says so, and housekeeping marks
		// it unknown once the database takes writes (see markUnknown).
		s.logger.Error("webhook attempt sent but its outcome not recorded; not sent again", "delivery", a.ID, "outcome", res.Outcome, "err", err)
		return river.JobCancel(err)
	}
	s.metrics.attempt(res, last)
	if res.OK() {
		return nil
	}
	if failingSince != nil {
		s.disableIfFailing(ctx, a.WebhookID, *failingSince, now)
	}
	return fmt.Errorf("attempt %d of delivery %s: %s", job.Attempt, a.ID, res.Error)
}

// recordPatience bounds how long a sent attempt's outcome is retried to
// be recorded by default (Config.RecordPatience): a database refusing
// connections for a moment (at max_connections, restarting) gets that
// long to come back.
const recordPatience = 15 * time.Second

// recordSent records an attempt that was sent, retrying while the
// database refuses. Ordering is what keeps a receiver from getting the
// same body twice: everything that can fail before the POST (loading the
// delivery, its webhook and its secrets) fails before anything is sent,
// and the job is then retried with nothing sent; once the POST is made,
// the attempt is the job's last act that can fail the job, so its record
// is retried here, with a context of its own (the job's may be cancelled
// by a shutdown), rather than by running the job, and the POST, again.
func (s *Service) recordSent(ctx context.Context, a attempt, run int, at time.Time, res Result, last bool) (*time.Time, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RecordPatience)
	defer cancel()
	for try := 1; ; try++ {
		since, err := s.record(ctx, a, run, at, res, last)
		if err == nil {
			return since, nil
		}
		wait := backoff.Delay(try, 50*time.Millisecond, time.Second)
		s.logger.Warn("record webhook attempt; retrying", "delivery", a.ID, "try", try, "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// attempt is what one attempt needs: the delivery (its status and how
// many runs were asked for), its webhook as the dispatcher knows it (never
// behind the jobs it queued; URL is nil once the webhook is deleted) and
// the secrets that sign now, the current one first.
type attempt struct {
	ID        uuid.UUID
	WebhookID uuid.UUID
	EventID   uuid.UUID
	Body      string
	Status    string
	Runs      int
	URL       *string
	Enabled   *bool
	Secrets   []string
}

// loadAttempt reads what an attempt needs, in one query with the attempts
// that ask at the same time (loadAttempts).
func (s *Service) loadAttempt(ctx context.Context, id uuid.UUID) (attempt, error) {
	a, err := s.loads.do(ctx, id)
	if err != nil {
		return a, fmt.Errorf("load delivery %s: %w", id, err)
	}
	if a.ID == uuid.Nil {
		return a, sql.ErrNoRows
	}
	return a, nil
}

// loadAttemptsSQL reads deliveries with their bodies, webhooks and
// secrets. It and recordAttemptsSQL run as prepared statements with one
// generic plan per connection (runPrepared), so a batch costs no planning
// (planning each batch was 45 µs of every delivery, more than running
// it: bench/webhooks/README.md). A generic plan knows neither the batch
// nor, later on, the tables' size, so the statements are written to leave
// the planner nothing but probes by key on the large tables: the batch's
// keys drive the query (unnest), and each table is reached from a key by
// a LATERAL subquery (OFFSET 0 keeps it one) that cannot be turned into a
// hash join over a scan of the table, which is what the generic plans of
// the joins these replaced did once the tables had grown (issue 40). The
// small tables (routes, secrets) may be scanned while they are a page.
const loadAttemptsSQL = `SELECT d.id, d.webhook_id, d.event_id, p.body, d.status, d.runs, r.url, r.enabled,
	array_remove(ARRAY[
		(SELECT secret FROM webhook_secrets WHERE id = r.secret_id),
		(SELECT secret FROM webhook_secrets WHERE id = r.previous_secret_id AND r.previous_valid_until > $2)
	], NULL)
	FROM unnest($1::uuid[]) AS k(id)
	CROSS JOIN LATERAL (SELECT d.id, d.webhook_id, d.event_id, d.status, d.runs FROM webhook_deliveries d WHERE d.id = k.id OFFSET 0) d
	CROSS JOIN LATERAL (SELECT p.body FROM webhook_payloads p WHERE p.event_id = d.event_id OFFSET 0) p
	LEFT JOIN LATERAL (SELECT r.url, r.enabled, r.secret_id, r.previous_secret_id, r.previous_valid_until
		FROM webhook_routes r WHERE r.id = d.webhook_id OFFSET 0) r ON true`

// The sender's prepared statements, by name on each connection.
const (
	loadAttemptsStmt   = "webhook_load_attempts"
	recordAttemptsStmt = "webhook_record_attempts"
)

// forceGenericPlanSQL makes the statement after it, in the same pipeline
// (one implicit transaction up to its Sync), run with its generic plan
// from the first run: left to choose, Postgres plans a statement anew for
// each run as long as the plans for the batches seen cost less than the
// generic plan's guess of 10 keys, which at 7-10 attempts a batch is most
// of the time. Local to the transaction: River's statements on the same
// connections keep Postgres's choice.
const forceGenericPlanSQL = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// replanAfter is how long a connection keeps a statement's generic plan
// before preparing it again. A generic plan is made for the tables as
// they are when it is made (their current size, not only their last
// ANALYZE): one made while a table was empty or a page may scan it, and
// Postgres makes a new one only after an ANALYZE of the table. Preparing
// again every few seconds bounds how long such a plan serves while the
// table grows, at a plan per connection and statement per interval.
const replanAfter = 10 * time.Second

// replanFirst is how long a connection keeps its first plan of a
// statement; each later one is kept twice as long as the one before, up to
// replanAfter. A connection's first plans are the ones likeliest made
// while the tables were nearly empty (a new installation's first
// deliveries, when the sender starts with the dispatcher's first batch):
// kept 10 s, such a plan scanned webhook_deliveries for every record of a
// 30,000-delivery burst (bench/webhooks/README.md, 29 Nov 2026). Doubling
// costs a connection about seven more plans of each statement in its
// first 10 s.
const replanFirst = 100 * time.Millisecond

// preparedPlan is when a connection prepared a statement, and how long it
// keeps that plan.
type preparedPlan struct {
	at   time.Time
	keep time.Duration
}

// runPrepared runs sql as the prepared statement name, on a connection of
// the sender's pool, with its generic plan, and hands its rows to scan.
func (s *Service) runPrepared(ctx context.Context, name, sql string, scan func(pgx.Rows) error, args ...any) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire a sender connection: %w", err)
	}
	defer conn.Release()
	if err := prepareFresh(ctx, conn.Conn(), name, sql); err != nil {
		return fmt.Errorf("prepare %s: %w", name, err)
	}
	b := &pgx.Batch{}
	b.Queue(forceGenericPlanSQL)
	b.Queue(name, args...)
	br := conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return fmt.Errorf("force generic plan: %w", err)
	}
	rows, err := br.Query()
	if err == nil {
		err = scan(rows)
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// prepareFresh prepares sql as name on c unless c's plan of it is still
// to be kept (replanFirst, replanAfter).
func prepareFresh(ctx context.Context, c *pgx.Conn, name, sql string) error {
	data := c.PgConn().CustomData()
	key := "webhook.prepared." + name
	p, prepared := data[key].(preparedPlan)
	if prepared && time.Since(p.at) < p.keep {
		return nil
	}
	keep := replanFirst
	if prepared {
		if err := c.Deallocate(ctx, name); err != nil {
			return err
		}
		delete(data, key)
		keep = min(2*p.keep, replanAfter)
	}
	if _, err := c.Prepare(ctx, name, sql); err != nil {
		return err
	}
	data[key] = preparedPlan{at: time.Now(), keep: keep}
	return nil
}

// loadAttempts reads a batch's attempts; a delivery that is gone gets the
// zero attempt.
func (s *Service) loadAttempts(ctx context.Context, ids []uuid.UUID) ([]attempt, error) {
	keys := make([][16]byte, len(ids))
	for i, id := range ids {
		keys[i] = id
	}
	found := make(map[uuid.UUID]attempt, len(ids))
	err := s.runPrepared(ctx, loadAttemptsStmt, loadAttemptsSQL, func(rows pgx.Rows) error {
		for rows.Next() {
			var a attempt
			if err := rows.Scan((*[16]byte)(&a.ID), (*[16]byte)(&a.WebhookID), (*[16]byte)(&a.EventID), &a.Body, &a.Status, &a.Runs,
				&a.URL, &a.Enabled, &a.Secrets); err != nil {
				return err
			}
			found[a.ID] = a
		}
		return nil
	}, keys, s.cfg.Now())
	if err != nil {
		return nil, err
	}
	out := make([]attempt, len(ids))
	for i, id := range ids {
		out[i] = found[id]
	}
	return out, nil
}

// cancel ends a delivery whose webhook is gone or disabled.
func (s *Service) cancel(ctx context.Context, id uuid.UUID, why string) error {
	_, err := s.db.NewUpdate().Model((*deliveryRow)(nil)).
		Set("status = ?, updated_at = ?", StatusCancelled, s.cfg.Now()).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("cancel delivery %s: %w", id, err)
	}
	s.metrics.cancelled()
	return river.JobCancel(fmt.Errorf("delivery %s: %s", id, why))
}

// outcome is an attempt's record: what it got, the delivery's new status.
type outcome struct {
	delivery, webhook uuid.UUID
	run               int
	at                time.Time
	res               Result
	status            string
}

// record writes an attempt, the delivery's new status and the webhook's
// failure streak, in one statement with the attempts that end at the same
// time (recordAttempts). It returns since when the webhook has failed
// every attempt; nil after a success (or a failure that a later success
// of the same batch outdid).
//
// The job is completed by River afterwards: a crash in between leaves an
// acknowledged delivery whose job looks unfinished, and the next run of
// the job finds it delivered and sends nothing.
func (s *Service) record(ctx context.Context, a attempt, run int, at time.Time, res Result, last bool) (*time.Time, error) {
	status := StatusPending
	switch {
	case res.OK():
		status = StatusDelivered
	case last:
		status = StatusFailed
	}
	since, err := s.records.do(ctx, outcome{delivery: a.ID, webhook: a.WebhookID, run: run, at: at, res: res, status: status})
	if err != nil {
		return nil, fmt.Errorf("record attempt of delivery %s: %w", a.ID, err)
	}
	return since, nil
}

// recordAttemptsSQL records a batch of attempts: their rows, their
// deliveries' status, and per webhook its failure streak. A webhook whose
// attempts in the batch all succeeded, or whose last success came after
// its last failure, ends its streak, if it has one (a healthy webhook's
// deliveries write and lock nothing shared); one that failed after its
// last success in the batch starts a streak then; one that only failed
// keeps its streak or starts one. The failing webhooks' streaks are
// returned. Like loadAttemptsSQL it runs with a generic plan, so its
// updates find their rows by key (= ANY of the batch's keys, an index
// probe each) rather than by a join the planner could hash; a delivery
// twice in one batch gets its first outcome's status.
const recordAttemptsSQL = `WITH r AS (
		SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::timestamptz[], $5::int[], $6::text[], $7::int[], $8::text[], $9::bool[])
			AS r(delivery_id, webhook_id, run, at, status_code, error, duration_ms, status, ok)
	), attempt AS (
		INSERT INTO webhook_attempts (delivery_id, run, at, status_code, error, duration_ms)
		SELECT delivery_id, run, at, status_code, error, duration_ms FROM r
	), delivery AS (
		UPDATE webhook_deliveries d SET status = ($8::text[])[array_position($1::uuid[], d.id)],
			updated_at = ($4::timestamptz[])[array_position($1::uuid[], d.id)]
		WHERE d.id = ANY($1::uuid[])
	), w AS (
		SELECT webhook_id, max(at) FILTER (WHERE ok) AS last_ok FROM r GROUP BY webhook_id
	), streak AS (
		SELECT w.webhook_id, w.last_ok, (SELECT min(r.at) FROM r WHERE r.webhook_id = w.webhook_id AND NOT r.ok
			AND (w.last_ok IS NULL OR r.at >= w.last_ok)) AS fail_from FROM w
	), healed AS (
		UPDATE webhook_health h SET failing_since = NULL
		WHERE h.webhook_id = ANY(ARRAY(SELECT webhook_id FROM streak WHERE fail_from IS NULL)) AND h.failing_since IS NOT NULL
	)
	INSERT INTO webhook_health (webhook_id, failing_since)
	SELECT webhook_id, fail_from FROM streak WHERE fail_from IS NOT NULL
	ON CONFLICT (webhook_id) DO UPDATE SET failing_since = CASE
		WHEN (SELECT last_ok FROM streak WHERE streak.webhook_id = EXCLUDED.webhook_id) IS NOT NULL THEN EXCLUDED.failing_since
		ELSE COALESCE(webhook_health.failing_since, EXCLUDED.failing_since) END
	RETURNING webhook_id, failing_since`

// recordAttempts records a batch's attempts and answers each failed one
// with its webhook's streak.
func (s *Service) recordAttempts(ctx context.Context, batch []outcome) ([]*time.Time, error) {
	n := len(batch)
	deliveries, webhooks := make([][16]byte, n), make([][16]byte, n)
	runs, durations := make([]int32, n), make([]int32, n)
	ats := make([]time.Time, n)
	codes := make([]pgtype.Int4, n)
	errs, statuses := make([]string, n), make([]string, n)
	oks := make([]bool, n)
	for i, o := range batch {
		deliveries[i], webhooks[i], runs[i], ats[i] = o.delivery, o.webhook, int32(o.run), o.at
		durations[i] = int32(min(o.res.Duration.Milliseconds(), math.MaxInt32))
		if o.res.StatusCode != 0 {
			codes[i] = pgtype.Int4{Int32: int32(o.res.StatusCode), Valid: true}
		}
		errs[i], statuses[i], oks[i] = o.res.Error, o.status, o.res.OK()
	}
	streaks := map[uuid.UUID]time.Time{}
	err := s.runPrepared(ctx, recordAttemptsStmt, recordAttemptsSQL, func(rows pgx.Rows) error {
		for rows.Next() {
			var id uuid.UUID
			var since time.Time
			if err := rows.Scan((*[16]byte)(&id), &since); err != nil {
				return err
			}
			streaks[id] = since
		}
		return nil
	}, deliveries, webhooks, runs, ats, codes, errs, durations, statuses, oks)
	if err != nil {
		return nil, err
	}
	out := make([]*time.Time, n)
	for i, o := range batch {
		if since, ok := streaks[o.webhook]; ok && !o.res.OK() {
			out[i] = &since
		}
	}
	return out, nil
}

// disableIfFailing asks the domain to disable a webhook whose receiver has
// failed everything for three days. A failure here only delays that to the
// next failed attempt.
func (s *Service) disableIfFailing(ctx context.Context, id uuid.UUID, since, now time.Time) {
	if now.Sub(since) < domain.FailingDisableAfter {
		return
	}
	disabled, err := s.parts.Commands.DisableFailingWebhook(ctx, commands.DisableFailingWebhook{ID: id, FailingSince: since, LastFailure: now})
	if err != nil {
		s.logger.Error("disable failing webhook", "webhook", id, "err", err)
		return
	}
	if disabled {
		s.logger.Warn("webhook disabled: its receiver failed every delivery for 3 days", "webhook", id, "failing_since", since)
	}
}
