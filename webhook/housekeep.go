package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// DeliveryRetention is how long the delivery log keeps a finished delivery.
const DeliveryRetention = 30 * 24 * time.Hour

// housekeepArgs is the hourly clean-up (a River periodic job, run by one
// process at a time).
type housekeepArgs struct{}

func (housekeepArgs) Kind() string { return "webhook_housekeep" }

type housekeepWorker struct {
	river.WorkerDefaults[housekeepArgs]
	svc *Service
}

// Work removes unused secrets, finished deliveries past retention with
// their bodies, and the failure streaks of deleted webhooks.
func (w *housekeepWorker) Work(ctx context.Context, _ *river.Job[housekeepArgs]) error {
	s := w.svc
	now := s.cfg.Now()
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
