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
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/backoff"
	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel"
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

func (w *deliveryWorker) Timeout(*river.Job[deliveryArgs]) time.Duration {
	return w.svc.cfg.jobTimeout()
}

// hostWait is how long an attempt waits for a slot of its receiver's host
// before it steps aside (snoozes, which costs no attempt) so that the
// process's slots serve other receivers.
const hostWait = 50 * time.Millisecond

func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	s := w.svc
	d, err := s.loadDelivery(ctx, job.Args.DeliveryID)
	if errors.Is(err, sql.ErrNoRows) {
		return river.JobCancel(fmt.Errorf("delivery %s is gone", job.Args.DeliveryID))
	}
	if err != nil {
		return err
	}
	hook, err := s.route(ctx, d.WebhookID)
	if errors.Is(err, sql.ErrNoRows) {
		return s.cancel(ctx, d, "webhook deleted")
	}
	if err != nil {
		return err
	}
	if !hook.Enabled {
		return s.cancel(ctx, d, "webhook disabled")
	}
	now := s.cfg.Now()
	secrets, err := s.secrets.Values(ctx, hook.SigningSecrets(now))
	if err != nil {
		return err
	}
	if len(secrets) == 0 {
		return fmt.Errorf("webhook %s has no signing secret", hook.ID)
	}
	release, ok := s.sender.hosts.acquire(ctx, hook.URL, hostWait)
	if !ok {
		return river.JobSnooze(time.Duration(100+rand.IntN(400)) * time.Millisecond)
	}
	res := s.sender.Send(ctx, Request{
		URL: hook.URL, WebhookID: hook.ID.String(), EventID: d.EventID.String(), Body: []byte(d.Body), Secrets: secrets, At: now,
	})
	release()
	last := job.Attempt >= job.MaxAttempts
	failingSince, err := s.record(ctx, d, job, now, res, last)
	if err != nil {
		return err
	}
	s.metrics.attempt(res, last)
	if res.OK() {
		return nil
	}
	if failingSince != nil {
		s.disableIfFailing(ctx, hook.ID, *failingSince, now)
	}
	return fmt.Errorf("attempt %d of delivery %s: %s", job.Attempt, d.ID, res.Error)
}

func (s *Service) loadDelivery(ctx context.Context, id uuid.UUID) (deliveryRow, error) {
	var d deliveryRow
	err := s.parts.DB.Bun.NewSelect().Model(&d).Where("id = ?", id).Scan(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("load delivery %s: %w", id, err)
	}
	return d, err
}

// route is the webhook as the dispatcher knows it: never behind the jobs
// it queued.
func (s *Service) route(ctx context.Context, id uuid.UUID) (readmodel.Webhook, error) {
	var w readmodel.Webhook
	err := s.parts.DB.Bun.NewSelect().Model(&w).ModelTableExpr("webhook_routes AS webhook").Where("id = ?", id).Scan(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return w, fmt.Errorf("load webhook %s: %w", id, err)
	}
	return w, err
}

// cancel ends a delivery whose webhook is gone or disabled.
func (s *Service) cancel(ctx context.Context, d deliveryRow, why string) error {
	_, err := s.parts.DB.Bun.NewUpdate().Model((*deliveryRow)(nil)).
		Set("status = ?, updated_at = ?", StatusCancelled, s.cfg.Now()).Where("id = ?", d.ID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("cancel delivery %s: %w", d.ID, err)
	}
	s.metrics.cancelled()
	return river.JobCancel(fmt.Errorf("delivery %s: %s", d.ID, why))
}

// record writes an attempt, the delivery's status and the webhook's failure
// streak in one transaction, which also completes an acknowledged job:
// were the job completed later, by River, a crash in between would send an
// acknowledged delivery again. It returns since when the webhook has failed
// every attempt (nil after a success).
func (s *Service) record(ctx context.Context, d deliveryRow, job *river.Job[deliveryArgs], at time.Time, res Result, last bool) (*time.Time, error) {
	run := job.Args.Run
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
	var failingSince *time.Time
	err := s.parts.DB.Bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`INSERT INTO webhook_attempts (delivery_id, run, at, status_code, error, duration_ms)
			VALUES (?, ?, ?, ?, ?, ?)`, d.ID, run, at, code, res.Error, res.Duration.Milliseconds()).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewRaw("UPDATE webhook_deliveries SET status = ?, updated_at = ? WHERE id = ?", status, at, d.ID).Exec(ctx); err != nil {
			return err
		}
		if res.OK() {
			if _, err := tx.NewRaw(`INSERT INTO webhook_health (webhook_id, failing_since, last_success_at) VALUES (?, NULL, ?)
				ON CONFLICT (webhook_id) DO UPDATE SET failing_since = NULL, last_success_at = EXCLUDED.last_success_at`,
				d.WebhookID, at).Exec(ctx); err != nil {
				return err
			}
			_, err := river.JobCompleteTx[*riverdatabasesql.Driver](ctx, tx.Tx, job)
			return err
		}
		var since time.Time
		err := tx.NewRaw(`INSERT INTO webhook_health (webhook_id, failing_since) VALUES (?, ?)
			ON CONFLICT (webhook_id) DO UPDATE SET failing_since = COALESCE(webhook_health.failing_since, EXCLUDED.failing_since)
			RETURNING failing_since`, d.WebhookID, at).Scan(ctx, &since)
		failingSince = &since
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record attempt of delivery %s: %w", d.ID, err)
	}
	return failingSince, nil
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
