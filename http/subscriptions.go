package http

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/readmodel/feedsubscriptions"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Secret subscription addresses: a feed's outputs at an address that
// carries its own credential (`?token=`), for feed readers and calendar
// apps, which cannot send a header. A token looks like an API key, with
// its own marker:
//
//	fss_<12 lowercase base32 characters: the lookup prefix>_<64 hex digits: the secret>
//
// Only the prefix and the SHA-256 of the secret are stored (in the log and
// the read model), as for keys (internal/auth); the token is shown once,
// in the answer that creates it. It sits in the query, which the service's
// logs never hold (they log the path alone).
const (
	tokenMarker    = "fss_"
	tokenPrefixLen = 12
	tokenSecretLen = 32
	tokenLen       = len(tokenMarker) + tokenPrefixLen + 1 + 2*tokenSecretLen
	tokenAlphabet  = "abcdefghijklmnopqrstuvwxyz234567"
)

// subscriptionRate bounds each address: a reader or calendar app polls a
// few times an hour; a leaked address shared widely is held to this.
var subscriptionRate = auth.Rate{Limit: 60, Window: time.Minute}

// newSubscriptionToken mints a token and what is stored of it.
func newSubscriptionToken() (token, prefix string, secretHash string, err error) {
	raw := make([]byte, tokenPrefixLen+tokenSecretLen)
	if _, err := rand.Read(raw); err != nil {
		return "", "", "", fmt.Errorf("read random token: %w", err)
	}
	p := make([]byte, tokenPrefixLen)
	for i, b := range raw[:tokenPrefixLen] {
		// 32 divides 256: each character is unbiased.
		p[i] = tokenAlphabet[b&31]
	}
	secret := raw[tokenPrefixLen:]
	sum := sha256.Sum256(secret)
	return tokenMarker + string(p) + "_" + hex.EncodeToString(secret), string(p), hex.EncodeToString(sum[:]), nil
}

// parseSubscriptionToken splits a token in its one canonical spelling.
func parseSubscriptionToken(token string) (prefix string, secret []byte, ok bool) {
	if len(token) != tokenLen || !strings.HasPrefix(token, tokenMarker) || token[len(tokenMarker)+tokenPrefixLen] != '_' {
		return "", nil, false
	}
	prefix = token[len(tokenMarker) : len(tokenMarker)+tokenPrefixLen]
	for i := 0; i < len(prefix); i++ {
		if !strings.ContainsRune(tokenAlphabet, rune(prefix[i])) {
			return "", nil, false
		}
	}
	hexSecret := token[len(tokenMarker)+tokenPrefixLen+1:]
	if strings.ToLower(hexSecret) != hexSecret {
		return "", nil, false
	}
	secret, err := hex.DecodeString(hexSecret)
	if err != nil {
		return "", nil, false
	}
	return prefix, secret, true
}

// outputsOf are a feed kind's outputs, by name in the answer.
func outputsOf(kind domain.FeedKind) map[string]string {
	if kind == domain.FeedHappenings {
		return map[string]string{"calendar": "calendar.ics"}
	}
	return map[string]string{"atom": "feed.atom", "json": "feed.json"}
}

// feedPath is where a feed of kind lives.
func feedPath(kind domain.FeedKind, feedID uuid.UUID) string {
	if kind == domain.FeedHappenings {
		return "/feeds/events/" + feedID.String()
	}
	return "/feeds/news/" + feedID.String()
}

type subscriptionJSON struct {
	ID        string            `json:"id"`
	URLs      map[string]string `json:"urls,omitempty"`
	CreatedAt string            `json:"createdAt"`
}

// createSubscription makes a secret address of a feed: the answer holds
// the address of each output, the only time the token is shown.
func (h *handlers) createSubscription(kind domain.FeedKind, param string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		feedID, err := pathUUID(c, param)
		if err != nil {
			return err
		}
		org := organization(c)
		if _, err := h.Reads.Feeds.Feed(c.UserContext(), kind, org, feedID); err != nil {
			return err
		}
		token, prefix, hash, err := newSubscriptionToken()
		if err != nil {
			return err
		}
		created, err := create(c, h, "subscription", func(e domain.FeedSubscriptionCreated) uuid.UUID { return e.SubscriptionID },
			(*commands.Handler).CreateFeedSubscription, commands.CreateFeedSubscription{
				FeedRef: commands.FeedRef{Kind: kind, Org: org, FeedID: feedID}, Prefix: prefix, SecretHash: hash,
			})
		if err != nil {
			return err
		}
		urls := map[string]string{}
		for name, file := range outputsOf(kind) {
			urls[name] = c.BaseURL() + feedPath(kind, feedID) + "/" + file + "?token=" + token
		}
		return envelope.OK(c, fiber.StatusCreated, subscriptionJSON{ID: created.SubscriptionID.String(), URLs: urls, CreatedAt: shape.Timestamp(created.At)})
	}
}

// listSubscriptions lists a feed's addresses, without their tokens.
func (h *handlers) listSubscriptions(kind domain.FeedKind, param string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		feedID, err := pathUUID(c, param)
		if err != nil {
			return err
		}
		org := organization(c)
		if _, err := h.Reads.Feeds.Feed(c.UserContext(), kind, org, feedID); err != nil {
			return err
		}
		subs, err := h.Reads.Subscriptions.List(c.UserContext(), org, kind, feedID)
		if err != nil {
			return err
		}
		out := make([]subscriptionJSON, 0, len(subs))
		for _, s := range subs {
			out = append(out, subscriptionJSON{ID: s.ID.String(), CreatedAt: shape.Timestamp(s.CreatedAt)})
		}
		return envelope.OK(c, fiber.StatusOK, out)
	}
}

// revokeSubscription ends an address; once answered, it answers 404.
func (h *handlers) revokeSubscription(kind domain.FeedKind, param string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		feedID, id, err := pathUUIDs(c, param, "subscriptionId")
		if err != nil {
			return err
		}
		org := organization(c)
		if _, err := h.Reads.Feeds.Feed(c.UserContext(), kind, org, feedID); err != nil {
			return err
		}
		err = writeDone(c, h, (*commands.Handler).RevokeFeedSubscription,
			commands.RevokeFeedSubscription{FeedRef: commands.FeedRef{Kind: kind, Org: org, FeedID: feedID}, ID: id})
		if err != nil {
			return err
		}
		return envelope.Deleted(c)
	}
}

// viaSubscription serves an output to a request that carries a token, as
// the organization that owns the address; a request without one goes on
// to the key's routes. Every token that does not open this feed's output
// (malformed, unknown, revoked, another feed's, another kind's) answers
// 404 as a missing feed does, so an address reveals nothing of others.
func (h *handlers) viaSubscription(kind domain.FeedKind, param string, serve func(c *fiber.Ctx, org, feedID uuid.UUID) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !c.Request().URI().QueryArgs().Has("token") {
			return c.Next()
		}
		feedID, err := pathUUID(c, param)
		if err != nil {
			return err
		}
		missing := envelope.NotFound("feed", feedID.String())
		prefix, secret, ok := parseSubscriptionToken(c.Query("token"))
		if !ok {
			return missing
		}
		s, err := h.Reads.Subscriptions.Authenticate(c.UserContext(), prefix, secret)
		switch {
		case errors.Is(err, feedsubscriptions.ErrUnknown):
			return missing
		case err != nil:
			return err
		case s.FeedKind != kind || s.FeedID != feedID:
			return missing
		}
		if h.Limiter != nil {
			u, err := h.Limiter.Count(c.UserContext(), s.ID, subscriptionRate)
			if err != nil {
				// Postgres could not count: the address is held to this
				// process's count (auth.Limiter.Count) rather than refused,
				// so readers are not locked out over a counter, nor is the
				// rate switched off; the failure is logged.
				h.Logger.WarnContext(c.UserContext(), "subscription rate not counted in the database; counted in this process", "subscription", s.ID, "err", err)
			}
			if !u.Allowed() {
				c.Set(fiber.HeaderRetryAfter, strconv.Itoa(u.Reset))
				return &envelope.Error{Status: fiber.StatusTooManyRequests, Code: envelope.CodeTooMany,
					Message: fmt.Sprintf("rate limit exceeded: this address may be fetched %d times a minute; retry in %d seconds", subscriptionRate.Limit, u.Reset)}
			}
		}
		return serve(c, s.OrganizationID, feedID)
	}
}

// subscriptionOutputs wires the outputs for tokens. They run before key
// authentication (New), which a request with a token never reaches.
func (h *handlers) subscriptionOutputs(app *fiber.App) {
	news := func(f newsFormat) func(c *fiber.Ctx, org, feedID uuid.UUID) error {
		return func(c *fiber.Ctx, org, feedID uuid.UUID) error { return h.writeNewsOutput(c, org, feedID, f) }
	}
	app.Get("/feeds/news/:feedId/feed.atom", h.viaSubscription(domain.FeedNews, "feedId", news(atomFormat)))
	app.Get("/feeds/news/:feedId/feed.json", h.viaSubscription(domain.FeedNews, "feedId", news(jsonFormat)))
	app.Get("/feeds/events/:id/calendar.ics", h.viaSubscription(domain.FeedHappenings, "id", h.writeCalendar))
}

// subscriptionRoutes wires the management of addresses: the feed kind's
// scope and items, since an address hands out the feed's items.
func (h *handlers) subscriptionRoutes(news, events fiber.Router, newsScope, eventsScope, items fiber.Handler) {
	news.Post("/:feedId/subscriptions", newsScope, items, h.createSubscription(domain.FeedNews, "feedId"))
	news.Get("/:feedId/subscriptions", newsScope, items, h.listSubscriptions(domain.FeedNews, "feedId"))
	news.Delete("/:feedId/subscriptions/:subscriptionId", newsScope, items, h.revokeSubscription(domain.FeedNews, "feedId"))
	events.Post("/:id/subscriptions", eventsScope, items, h.createSubscription(domain.FeedHappenings, "id"))
	events.Get("/:id/subscriptions", eventsScope, items, h.listSubscriptions(domain.FeedHappenings, "id"))
	events.Delete("/:id/subscriptions/:subscriptionId", eventsScope, items, h.revokeSubscription(domain.FeedHappenings, "id"))
}
