package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Probe is a test delivery (POST /webhooks/test, D10).
type Probe struct {
	Org       uuid.UUID
	URL       string
	WebhookID *uuid.UUID
}

// ProbeResult is what the test delivery got. Secret is set when no webhook
// of the caller signed it: the fresh secret that did.
type ProbeResult struct {
	Result
	Secret string
}

// Test sends one signed sample delivery now, once, and reports what the
// endpoint answered. It signs with the secrets of the webhook named, or of
// the caller's webhook with that url; otherwise with a fresh secret it
// returns. Nothing is recorded.
func (s *Service) Test(ctx context.Context, p Probe) (ProbeResult, error) {
	now := s.cfg.Now()
	secrets, hookID, fresh, err := s.probeSecrets(ctx, p, now)
	if err != nil {
		return ProbeResult{}, err
	}
	payload, err := s.sampleBody(now)
	if err != nil {
		return ProbeResult{}, err
	}
	release, ok := s.sender.hosts.acquire(ctx, p.URL, s.cfg.AttemptTimeout)
	if !ok {
		return ProbeResult{Result: Result{Outcome: OutcomeConnection, Error: "too many deliveries to this host are in flight; try again shortly"}, Secret: fresh}, nil
	}
	defer release()
	res := s.sender.Send(ctx, Request{
		URL: p.URL, WebhookID: hookID.String(), EventID: uuid.NewString(), Body: payload, Secrets: secrets, At: now,
	})
	s.metrics.probe(res)
	return ProbeResult{Result: res, Secret: fresh}, nil
}

func (s *Service) probeSecrets(ctx context.Context, p Probe, now time.Time) (secrets []string, hookID uuid.UUID, fresh string, err error) {
	var ids []uuid.UUID
	switch {
	case p.WebhookID != nil:
		hook, err := s.parts.Queries.Webhook(ctx, p.Org, *p.WebhookID)
		if err != nil {
			return nil, uuid.Nil, "", err
		}
		ids, hookID = hook.SigningSecrets(now), hook.ID
	default:
		hook, found, err := s.parts.Queries.WebhookByURL(ctx, p.Org, p.URL)
		if err != nil {
			return nil, uuid.Nil, "", err
		}
		if !found {
			fresh = NewSecret()
			return []string{fresh}, uuid.Nil, fresh, nil
		}
		ids, hookID = hook.SigningSecrets(now), hook.ID
	}
	secrets, err = s.secrets.Values(ctx, ids)
	if err != nil {
		return nil, uuid.Nil, "", err
	}
	if len(secrets) == 0 {
		return nil, uuid.Nil, "", fmt.Errorf("webhook %s has no signing secret", hookID)
	}
	return secrets, hookID, "", nil
}

// sampleBody is a test delivery's body: a made-up event item rendered like
// real ones, so a receiver can exercise its whole path.
func (s *Service) sampleBody(now time.Time) ([]byte, error) {
	feed, happening := uuid.New(), uuid.New()
	start := now.Add(7 * 24 * time.Hour).Truncate(time.Hour)
	end := start.Add(2 * time.Hour)
	instance := uuid.NewSHA1(happening, []byte("instance"))
	details := domain.HappeningDetails{
		Title: "Sample event", Description: "<p>A test delivery of the event.item_added webhook.</p>",
		Time:             domain.HappeningTime{TemporalPattern: domain.PatternSingular, Timezone: "UTC", DisplayText: start.Format("Mon 2 Jan 2006, 15:04") + " UTC"},
		Instances:        []domain.HappeningInstance{{Key: "sample", ID: instance, Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{ID: uuid.NewSHA1(instance, []byte("o")), Start: start, End: &end}}}},
		Location:         &domain.Location{Venue: &domain.Venue{Name: "Town hall"}, DisplayAddress: "Town hall"},
		SupportingImages: []string{}, URLs: []string{"https://example.com/events/sample"}, PrimaryURL: "https://example.com/events/sample",
		GeoLocations: []domain.GeoLocation{},
	}
	item := domain.HappeningItemAdded{ItemID: domain.HappeningItemID(feed, happening), FeedID: feed, HappeningID: happening, At: now}
	data, err := s.cfg.Render(item, details)
	if err != nil {
		return nil, err
	}
	return shape.DeliveryBody(domain.WebhookItemAdded, now, data)
}
