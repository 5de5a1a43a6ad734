package http

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/ingest/websub"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// The WebSub callback (ingest/websub): hubs verify the subscriptions the
// crawler asked for and push the feeds' new content here. It takes no
// key: the path's id is unguessable and known only to the hub, and pushed
// content counts only when signed with the subscription's secret. Every
// answer is short and echoes nothing of the request but the challenge a
// hub must have echoed.

// websubRoutes wires the callback; it runs before key authentication.
func (h *handlers) websubRoutes(app *fiber.App) {
	if h.WebSub == nil {
		return
	}
	app.Get(websub.CallbackPath+":id", h.websubVerify)
	app.Post(websub.CallbackPath+":id", h.websubReceive)
}

// errNoSubscription answers an id, topic or request this service does not
// know, as the recommendation asks (404), naming nothing of it.
var errNoSubscription = &envelope.Error{Status: fiber.StatusNotFound, Code: envelope.CodeNotFound,
	Message: "no such subscription", Resource: "subscription"}

var errCallbackRate = &envelope.Error{Status: fiber.StatusTooManyRequests, Code: envelope.CodeTooMany,
	Message: "too many requests for this callback; retry in a second"}

func (h *handlers) websubAllow(c *fiber.Ctx) error {
	if !h.WebSub.Allow(c.Params("id")) {
		c.Set(fiber.HeaderRetryAfter, "1")
		return errCallbackRate
	}
	return nil
}

// websubVerify answers a hub's intent verification (hub.mode subscribe or
// unsubscribe: the challenge, as text, when it matches a request the
// crawler sent and not yet saw verified, else 404) or denial (hub.mode
// denied: 200 when the topic is the subscription's).
func (h *handlers) websubVerify(c *fiber.Ctx) error {
	if err := h.websubAllow(c); err != nil {
		return err
	}
	challenge, ok, err := h.WebSub.Verify(c.UserContext(), c.Params("id"), websub.Verification{
		Mode: c.Query("hub.mode"), Topic: c.Query("hub.topic"), Challenge: c.Query("hub.challenge"),
		LeaseSeconds: c.Query("hub.lease_seconds"), Reason: c.Query("hub.reason"),
	})
	if err != nil {
		return err
	}
	if !ok {
		return errNoSubscription
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.Status(fiber.StatusOK).SendString(challenge)
}

// websubReceive takes a hub's content distribution: 202 whether it was
// queued or ignored for its signature (the recommendation lets a
// subscriber acknowledge what it ignores, and a forger learns nothing),
// 404 for an unknown id, 415 for a compressed body (uncompressedBody).
// The body was bounded by transport.BoundBody.
func (h *handlers) websubReceive(c *fiber.Ctx) error {
	if err := h.websubAllow(c); err != nil {
		return err
	}
	body, err := uncompressedBody(c)
	if err != nil {
		return err
	}
	got, err := h.WebSub.Receive(c.UserContext(), c.Params("id"), c.Get("X-Hub-Signature"), body)
	if err != nil {
		return err
	}
	if got == websub.Unknown {
		return errNoSubscription
	}
	return c.SendStatus(fiber.StatusAccepted)
}

// bodyLimits is the body bound of each path: the API's, but a hub's push
// to the callback may be as large as a feed the crawler reads.
func bodyLimits(api int, sub *websub.Subscriber) func(path string) int {
	if sub == nil {
		return func(string) int { return api }
	}
	pushes := max(api, sub.MaxBodyBytes())
	return func(path string) int {
		if strings.HasPrefix(path, websub.CallbackPath) {
			return pushes
		}
		return api
	}
}

// sourcePushJSON is a source's WebSub subscription in its detail.
type sourcePushJSON struct {
	Hub            string  `json:"hub"`
	Topic          string  `json:"topic"`
	State          string  `json:"state"`
	LeaseExpiresAt *string `json:"leaseExpiresAt"`
}

// pushOf reads the source's subscription for its detail; nil when it has
// none. The caller has checked that the organization may see the source's
// schedule.
func (h *handlers) pushOf(c *fiber.Ctx, sourceID uuid.UUID) (*sourcePushJSON, error) {
	if h.WebSub == nil || h.Push == nil {
		return nil, nil
	}
	p, ok, err := h.Push(c.UserContext(), sourceID)
	if err != nil || !ok {
		return nil, err
	}
	out := &sourcePushJSON{Hub: p.Hub, Topic: p.Topic, State: p.State}
	if p.LeaseExpiresAt != nil {
		t := shape.Timestamp(*p.LeaseExpiresAt)
		out.LeaseExpiresAt = &t
	}
	return out, nil
}
