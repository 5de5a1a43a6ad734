package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// DeliveryRetention is how long the delivery log keeps a finished delivery.
const DeliveryRetention = 30 * 24 * time.Hour

// housekeepArgs is the hourly clean-up (a River job the gate queues once
// an hour, unique for the hour, so one process runs it).
type housekeepArgs struct{}

func (housekeepArgs) Kind() string { return "webhook_housekeep" }

type housekeepWorker struct {
	river.WorkerDefaults[housekeepArgs]
	svc *Service
}

func (w *housekeepWorker) Work(ctx context.Context, _ *river.Job[housekeepArgs]) error {
	return w.svc.Housekeep(ctx)
}

// Housekeep marks deliveries whose job ended without an outcome unknown,
// and removes unused secrets, finished deliveries past retention with
// their bodies, and the failure streaks of deleted webhooks. The webhooks
// role's gate queues it hourly and when the role starts (gate.go); River
// keeps it to one run an hour across processes.
func (s *Service) Housekeep(ctx context.Context) error {
	now := s.cfg.Now()
	if err := s.markUnknown(ctx, now); err != nil {
		return err
	}
	if _, err := s.secrets.Housekeep(ctx, now); err != nil {
		return err
	}
	db := s.db
	if _, err := db.NewRaw("DELETE FROM webhook_deliveries WHERE status <> ? AND updated_at < ?",
		StatusPending, now.Add(-DeliveryRetention)).Exec(ctx); err != nil {
		return fmt.Errorf("remove old deliveries: %w", err)
	}
	if _, err := db.NewRaw(`DELETE FROM webhook_payloads p WHERE p.created_at < ?
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = p.event_id)`,
		now.Add(-DeliveryRetention)).Exec(ctx); err != nil {
		return fmt.Errorf("remove bodies of removed deliveries: %w", err)
	}
	if _, err := db.NewRaw(`DELETE FROM webhook_health h WHERE NOT EXISTS (SELECT 1 FROM webhook_routes r WHERE r.id = h.webhook_id)`).Exec(ctx); err != nil {
		return fmt.Errorf("remove failure streaks of deleted webhooks: %w", err)
	}
	return nil
}

// markUnknown makes visible, and redeliverable, a delivery left pending
// with no job to finish it. That happens when an attempt was sent but its
// record was refused for longer than Config.RecordPatience (the job ends
// rather than send again, see deliveryWorker.Work), or when the last
// attempt failed before sending (its delivery, webhook or secrets could
// not be read). Either way nothing will change the delivery any more, and
// whether the receiver got it is not known: the status says so, the
// delivery's attempts show what was recorded, and redeliver (which
// refuses a pending delivery) sends it again on request. The job of a
// delivery's current run is found by its arguments, as the unique job
// River holds for (delivery, run); one still waiting, retrying or running
// keeps the delivery pending. The job is matched by equality on its two
// arguments, which Postgres answers with one hash of the live jobs; a
// containment test (args @> …) could only be a scan of river_job per
// pending delivery, minutes of CPU on a start with a backlog. A redelivery committing while this runs
// may be marked unknown although its new job is queued: that job still
// sends and records its outcome, so the mark lasts until then.
func (s *Service) markUnknown(ctx context.Context, now time.Time) error {
	res, err := s.db.NewRaw(`UPDATE webhook_deliveries d SET status = ?, updated_at = ?
		WHERE d.status = ? AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.kind = ?
			AND j.args->>'deliveryId' = d.id::text AND j.args->>'run' = d.runs::text
			AND j.state NOT IN ('completed', 'cancelled', 'discarded'))`,
		StatusUnknown, now, StatusPending, deliveryArgs{}.Kind()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark deliveries left without a job unknown: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		s.metrics.deliveries.WithLabelValues(StatusUnknown).Add(float64(n))
		s.logger.Warn("webhook deliveries left pending without a job marked unknown; they may be redelivered", "deliveries", n)
	}
	return nil
}
