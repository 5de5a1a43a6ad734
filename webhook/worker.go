package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
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
	a, err := s.loadAttempt(ctx, job.Args.DeliveryID, now)
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
	s.disableIfFailing(ctx, a.WebhookID, *failingSince, now)
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

// attempt is what one attempt needs, read in one query: the delivery (its
// status and how many runs were asked for), its
// webhook as the dispatcher knows it (never behind the jobs it queued; URL
// is nil once the webhook is deleted) and the secrets that sign now, the
// current one first.
type attempt struct {
	ID        uuid.UUID `bun:"id"`
	WebhookID uuid.UUID `bun:"webhook_id"`
	EventID   uuid.UUID `bun:"event_id"`
	Body      string    `bun:"body"`
	Status    string    `bun:"status"`
	Runs      int       `bun:"runs"`
	URL       *string   `bun:"url"`
	Enabled   *bool     `bun:"enabled"`
	Secrets   []string  `bun:"secrets,array"`
}

func (s *Service) loadAttempt(ctx context.Context, id uuid.UUID, now time.Time) (attempt, error) {
	var a attempt
	err := s.db.NewRaw(`SELECT d.id, d.webhook_id, d.event_id, p.body, d.status, d.runs, r.url, r.enabled,
		array_remove(ARRAY[
			(SELECT secret FROM webhook_secrets WHERE id = r.secret_id),
			(SELECT secret FROM webhook_secrets WHERE id = r.previous_secret_id AND r.previous_valid_until > ?)
		], NULL) AS secrets
		FROM webhook_deliveries d JOIN webhook_payloads p ON p.event_id = d.event_id
		LEFT JOIN webhook_routes r ON r.id = d.webhook_id WHERE d.id = ?`, now, id).Scan(ctx, &a)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("load delivery %s: %w", id, err)
	}
	return a, err
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

// record writes an attempt, the delivery's new status and the webhook's
// failure streak in one statement. It returns since when the webhook has
// failed every attempt; nil after a success.
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
	var code *int
	if res.StatusCode != 0 {
		code = &res.StatusCode
	}
	args := []any{a.ID, run, at, code, res.Error, res.Duration.Milliseconds(), status, at, a.ID, a.WebhookID}
	if !res.OK() {
		args = append(args, at)
	}
	q := s.db.NewRaw(`WITH attempt AS (
			INSERT INTO webhook_attempts (delivery_id, run, at, status_code, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)
		), delivery AS (
			UPDATE webhook_deliveries SET status = ?, updated_at = ? WHERE id = ?
		) `+streak(res), args...)
	if res.OK() {
		if _, err := q.Exec(ctx); err != nil {
			return nil, fmt.Errorf("record attempt of delivery %s: %w", a.ID, err)
		}
		return nil, nil
	}
	var since time.Time
	if err := q.Scan(ctx, &since); err != nil {
		return nil, fmt.Errorf("record attempt of delivery %s: %w", a.ID, err)
	}
	return &since, nil
}

// streak ends a failing webhook's failure streak on a success (a healthy
// webhook's deliveries write and lock nothing shared), or starts or keeps
// it on a failure, returning since when it fails.
func streak(res Result) string {
	if res.OK() {
		return `UPDATE webhook_health SET failing_since = NULL WHERE webhook_id = ? AND failing_since IS NOT NULL`
	}
	return `INSERT INTO webhook_health (webhook_id, failing_since) VALUES (?, ?)
		ON CONFLICT (webhook_id) DO UPDATE SET failing_since = COALESCE(webhook_health.failing_since, EXCLUDED.failing_since)
		RETURNING failing_since`
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
