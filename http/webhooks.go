package http

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/transport"
	"github.com/feedsvc/feedsvc/readmodel/shape"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
	"github.com/feedsvc/feedsvc/webhook"
)

// Webhook subscriptions and their delivery log (D10). They answer in the
// news dialect: they are not event-feed endpoints, and their 404s name the
// missing resource (webhook, delivery, eventFeed).

type webhookJSON struct {
	ID            string   `json:"id"`
	URL           string   `json:"url"`
	Events        []string `json:"events"`
	EventFeedIDs  []string `json:"eventFeedIds"`
	Filter        string   `json:"filter,omitempty"`
	Enabled       bool     `json:"enabled"`
	EnabledSource string   `json:"enabledSource"`
	EnabledReason string   `json:"enabledReason,omitempty"`
	CreatedAt     string   `json:"createdAt"`
	UpdatedAt     string   `json:"updatedAt"`
}

func webhookOut(w domain.WebhookState) webhookJSON {
	return webhookJSON{
		ID: w.ID.String(), URL: w.Config.URL, Events: w.Config.Events, EventFeedIDs: webhooks.UUIDStrings(w.Config.EventFeedIDs),
		Filter: w.Config.Filter, Enabled: w.Enabled, EnabledSource: w.EnabledBy, EnabledReason: w.Reason,
		CreatedAt: shape.Timestamp(w.CreatedAt), UpdatedAt: shape.Timestamp(w.UpdatedAt),
	}
}

type createdWebhookJSON struct {
	webhookJSON
	Secret string `json:"secret"`
}

type webhookBody struct {
	URL          *string   `json:"url"`
	Events       *[]string `json:"events"`
	EventFeedIDs *[]string `json:"eventFeedIds"`
	Filter       *string   `json:"filter"`
	Enabled      *bool     `json:"enabled"`
}

func (b webhookBody) request(targets domain.TargetPolicy) domain.WebhookRequest {
	return domain.WebhookRequest{URL: b.URL, Events: b.Events, EventFeedIDs: b.EventFeedIDs, Filter: b.Filter, Targets: targets}
}

// knownEventFeeds refuses event feed ids the organization has no event
// feed of, as D4 refuses an unknown sourceId: 404 naming it.
func (h *handlers) knownEventFeeds(ctx context.Context, org uuid.UUID, ids []uuid.UUID) error {
	id, missing, err := h.Reads.Feeds.MissingFeed(ctx, domain.FeedHappenings, org, ids)
	if err != nil {
		return err
	}
	if missing {
		return &domain.NotFoundError{Resource: "eventFeed", ID: id.String()}
	}
	return nil
}

func (h *handlers) createWebhook(c *fiber.Ctx) error {
	var body webhookBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	config, err := domain.NewWebhookConfig(body.request(h.targets))
	if err != nil {
		return err
	}
	org := organization(c)
	if err := h.knownEventFeeds(c.UserContext(), org, config.EventFeedIDs); err != nil {
		return err
	}
	secretID, secret, err := h.Webhooks.Secrets().Create(c.UserContext(), org, transport.IdempotencyScope(c).NewID("webhookSecret"))
	if err != nil {
		return err
	}
	hook, err := create(c, h, "webhook", func(w domain.WebhookState) uuid.UUID { return w.ID }, (*commands.Handler).CreateWebhook, commands.CreateWebhook{Org: org, Config: config, SecretID: secretID})
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusCreated, createdWebhookJSON{webhookJSON: webhookOut(hook), Secret: secret})
}

func (h *handlers) listWebhooks(c *fiber.Ctx) error {
	hooks, err := h.Reads.Webhooks.Webhooks(c.UserContext(), organization(c))
	if err != nil {
		return err
	}
	out := make([]webhookJSON, 0, len(hooks))
	for _, w := range hooks {
		out = append(out, webhookOut(w.State()))
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

func webhookRef(c *fiber.Ctx) (commands.WebhookRef, error) {
	id, err := pathUUID(c, "webhookId")
	return commands.WebhookRef{Org: organization(c), ID: id}, err
}

func (h *handlers) getWebhook(c *fiber.Ctx) error {
	ref, err := webhookRef(c)
	if err != nil {
		return err
	}
	w, err := h.Reads.Webhooks.Webhook(c.UserContext(), ref.Org, ref.ID)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, webhookOut(w.State()))
}

func (h *handlers) updateWebhook(c *fiber.Ctx) error {
	ref, err := webhookRef(c)
	if err != nil {
		return err
	}
	var body webhookBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	update := domain.WebhookUpdate{Request: body.request(h.targets), Enabled: body.Enabled}
	if body.EventFeedIDs != nil {
		ids, err := domain.ParseWebhookFeedIDs(*body.EventFeedIDs)
		if err != nil {
			return err
		}
		if err := h.knownEventFeeds(c.UserContext(), ref.Org, ids); err != nil {
			return err
		}
	}
	hook, err := write(c, h, (*commands.Handler).UpdateWebhook, commands.UpdateWebhook{WebhookRef: ref, Update: update})
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, webhookOut(hook))
}

func (h *handlers) deleteWebhook(c *fiber.Ctx) error {
	ref, err := webhookRef(c)
	if err != nil {
		return err
	}
	if err := writeDone(c, h, (*commands.Handler).DeleteWebhook, ref); err != nil {
		return err
	}
	return envelope.Deleted(c)
}

type rotatedSecretJSON struct {
	ID                       string `json:"id"`
	Secret                   string `json:"secret"`
	PreviousSecretValidUntil string `json:"previousSecretValidUntil"`
}

func (h *handlers) rotateWebhookSecret(c *fiber.Ctx) error {
	ref, err := webhookRef(c)
	if err != nil {
		return err
	}
	if _, err := h.Reads.Webhooks.Webhook(c.UserContext(), ref.Org, ref.ID); err != nil {
		return err
	}
	secretID, secret, err := h.Webhooks.Secrets().Create(c.UserContext(), ref.Org, transport.IdempotencyScope(c).NewID("webhookSecret"))
	if err != nil {
		return err
	}
	hook, err := write(c, h, (*commands.Handler).RotateWebhookSecret, commands.RotateWebhookSecret{WebhookRef: ref, SecretID: secretID})
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, rotatedSecretJSON{
		ID: hook.ID.String(), Secret: secret, PreviousSecretValidUntil: shape.Timestamp(hook.UpdatedAt.Add(domain.SecretGrace)),
	})
}

type attemptJSON struct {
	Run        int    `json:"run"`
	At         string `json:"at"`
	StatusCode *int   `json:"statusCode,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"durationMs"`
}

// deliveryJSON is the API's delivery: eventId is the stored event's id,
// event the webhook event (webhook.Delivery.WebhookEvent).
type deliveryJSON struct {
	ID          string        `json:"id"`
	WebhookID   string        `json:"webhookId"`
	EventID     string        `json:"eventId"`
	Event       string        `json:"event"`
	EventFeedID string        `json:"eventFeedId"`
	ItemID      string        `json:"itemId"`
	Status      string        `json:"status"`
	CreatedAt   string        `json:"createdAt"`
	UpdatedAt   string        `json:"updatedAt"`
	Attempts    []attemptJSON `json:"attempts"`
}

func deliveryOut(d webhook.Delivery) deliveryJSON {
	attempts := make([]attemptJSON, len(d.Attempts))
	for i, a := range d.Attempts {
		attempts[i] = attemptJSON{Run: a.Run, At: shape.Timestamp(a.At), StatusCode: a.StatusCode, Error: a.Error, DurationMs: a.Duration.Milliseconds()}
	}
	return deliveryJSON{
		ID: d.ID.String(), WebhookID: d.WebhookID.String(), EventID: d.EventID.String(), Event: d.WebhookEvent,
		EventFeedID: d.EventFeedID.String(), ItemID: d.ItemID.String(), Status: d.Status,
		CreatedAt: shape.Timestamp(d.CreatedAt), UpdatedAt: shape.Timestamp(d.UpdatedAt), Attempts: attempts,
	}
}

// defaultDeliveryLimit is the delivery list's page size; its bounds are
// item lists' (api.md 8).
const defaultDeliveryLimit = 20

func (h *handlers) listDeliveries(c *fiber.Ctx) error {
	ref, err := webhookRef(c)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", defaultDeliveryLimit, 1, maxItemLimit)
	if err != nil {
		return err
	}
	offset, err := intParam(c, "offset", 0, 0, 1<<31-1)
	if err != nil {
		return err
	}
	list, total, err := h.Webhooks.Deliveries(c.UserContext(), ref.Org, ref.ID, limit, offset)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(list))
	for i, d := range list {
		out[i] = deliveryOut(d)
	}
	return envelope.OK(c, fiber.StatusOK, itemList{Items: out, Total: total, Pagination: pageOf(limit, offset, len(list), total)})
}

func (h *handlers) getDelivery(c *fiber.Ctx) error {
	webhookID, deliveryID, err := pathUUIDs(c, "webhookId", "deliveryId")
	if err != nil {
		return err
	}
	d, err := h.Webhooks.Delivery(c.UserContext(), organization(c), webhookID, deliveryID)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, deliveryOut(d))
}

func (h *handlers) redeliver(c *fiber.Ctx) error {
	webhookID, deliveryID, err := pathUUIDs(c, "webhookId", "deliveryId")
	if err != nil {
		return err
	}
	d, err := h.Webhooks.Redeliver(c.UserContext(), organization(c), webhookID, deliveryID)
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusAccepted, deliveryOut(d))
}

type testWebhookBody struct {
	URL       *string `json:"url"`
	Event     *string `json:"event"`
	WebhookID *string `json:"webhookId"`
}

type testWebhookJSON struct {
	Delivered  bool   `json:"delivered"`
	StatusCode *int   `json:"statusCode,omitempty"`
	DurationMs int64  `json:"durationMs"`
	Error      string `json:"error,omitempty"`
	Secret     string `json:"secret,omitempty"`
}

func (h *handlers) testWebhook(c *fiber.Ctx) error {
	var body testWebhookBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.URL == nil {
		return envelope.BadRequest("url", "is required")
	}
	url, err := domain.NewWebhookURL(*body.URL, h.targets)
	if err != nil {
		return err
	}
	if body.Event == nil {
		return envelope.BadRequest("event", "is required")
	}
	if err := domain.CheckWebhookEvent("event", *body.Event); err != nil {
		return err
	}
	probe := webhook.Probe{Org: organization(c), URL: url}
	if body.WebhookID != nil {
		id, err := parseUUID("webhookId", *body.WebhookID)
		if err != nil {
			return err
		}
		probe.WebhookID = &id
	}
	res, err := h.Webhooks.Test(c.UserContext(), probe)
	if err != nil {
		return err
	}
	out := testWebhookJSON{Delivered: res.OK(), DurationMs: res.Duration.Milliseconds(), Error: res.Error, Secret: res.Secret}
	if res.StatusCode != 0 {
		out.StatusCode = &res.StatusCode
	}
	return envelope.OK(c, fiber.StatusOK, out)
}
