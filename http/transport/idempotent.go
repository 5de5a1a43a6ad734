package transport

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/keyauth"
	"github.com/feedsvc/feedsvc/internal/idempotency"
)

// headerIdempotencyKey names a write so that it can be repeated safely.
const headerIdempotencyKey = "Idempotency-Key"

// maxIdempotencyKeyLen bounds a key; a UUID fits many times over.
const maxIdempotencyKeyLen = 255

// notReplayed are the headers that belong to an answer's moment, not to
// the request: a replay gets its own.
var notReplayed = []string{
	fiber.HeaderDate, fiber.HeaderServer, fiber.HeaderContentLength, fiber.HeaderConnection,
	fiber.HeaderTransferEncoding, fiber.HeaderXRequestID, fiber.HeaderRetryAfter,
	"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy",
}

// Idempotent makes POST, PATCH and DELETE with an Idempotency-Key safe to
// repeat (IETF draft-ietf-httpapi-idempotency-key-header): the same key from
// the same organization within 24 hours answers the first answer, with
// Idempotent-Replayed: true, without running the request again; the same
// key with another method, target or body is 422; while the first run is
// under way, 409 with Retry-After. A run that ends in a 5xx records
// nothing, so repeating it runs it again, and a run whose process died
// leaves its key to be taken over when its lease ends: either rerun finds
// the work the first did in the event log (idempotency.Scope) and answers
// with it. It must run after the auth middleware.
func Idempotent(store *idempotency.Store, logger *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		switch c.Method() {
		case fiber.MethodPost, fiber.MethodPatch, fiber.MethodDelete:
		default:
			return c.Next()
		}
		values := c.Request().Header.PeekAll(headerIdempotencyKey)
		if len(values) == 0 {
			return c.Next()
		}
		if len(values) > 1 {
			return envelope.BadRequest(headerIdempotencyKey, "must be given once")
		}
		key := string(values[0])
		if !validIdempotencyKey(key) {
			return envelope.BadRequest(headerIdempotencyKey, "must be 1 to 255 visible ASCII characters")
		}
		p, _ := keyauth.PrincipalFrom(c)
		claim, err := store.Begin(c.UserContext(), p.OrganizationID, key,
			idempotency.Fingerprint(c.Method(), c.OriginalURL(), c.BodyRaw()))
		if err != nil {
			return err
		}
		switch claim.Outcome {
		case idempotency.Mismatch:
			return &envelope.Error{Status: fiber.StatusUnprocessableEntity,
				Message: "this Idempotency-Key was used in the last 24 hours for a different request (method, path or body); use a new key for a new request",
				Field:   headerIdempotencyKey, Issue: "was used for a different request"}
		case idempotency.Running:
			c.Set(fiber.HeaderRetryAfter, "1")
			return &envelope.Error{Status: fiber.StatusConflict, Code: envelope.CodeConflict,
				Message: "a request with this Idempotency-Key is still running; repeat it shortly to get its answer",
				Field:   headerIdempotencyKey, Issue: "is in use by a request still running"}
		case idempotency.Replay:
			replay(c, claim.Answer)
			return nil
		}
		return runIdempotently(c, store, claim, logger)
	}
}

// scopeLocal keys the request's idempotency scope among its locals.
type scopeLocal struct{}

// IdempotencyScope is the scope Idempotent gave a write with an
// Idempotency-Key; the zero Scope otherwise. The write runs its command in
// it, so that a rerun finds the work of a run that died.
func IdempotencyScope(c *fiber.Ctx) idempotency.Scope {
	s, _ := c.Locals(scopeLocal{}).(idempotency.Scope)
	return s
}

// runIdempotently runs the request as the key's owner and records its
// answer (or, for an answer not to keep, gives the key up so that a repeat
// runs it again).
func runIdempotently(c *fiber.Ctx, store *idempotency.Store, claim idempotency.Claim, logger *slog.Logger) (err error) {
	base := c.UserContext()
	// The run gets less time than its lease, so that a key whose lease ran
	// out belongs to a run that is over.
	ctx, cancel := context.WithTimeout(base, store.WorkTime())
	defer cancel()
	c.SetUserContext(ctx)
	// The writes pass the scope to what they run (IdempotencyScope).
	c.Locals(scopeLocal{}, claim.Scope)
	if claim.Rerun {
		logger.InfoContext(base, "idempotent request run again", "path", c.Path())
	}
	defer func() {
		if p := recover(); p != nil {
			record, done := recording(base)
			defer done()
			_ = store.Release(record, claim)
			panic(p)
		}
	}()
	if err := c.Next(); err != nil {
		// Rendered here rather than by the app, so the answer can be kept.
		if err := c.App().ErrorHandler(c, err); err != nil {
			return err
		}
	}
	record, done := recording(base)
	defer done()
	resp := c.Response()
	if status := resp.StatusCode(); !keepable(status) {
		err = store.Release(record, claim)
	} else {
		err = store.Finish(record, claim, idempotency.Answer{Status: status, Header: keptHeaders(c), Body: resp.Body()})
	}
	if err != nil {
		// The answer stands; a repeat of the request runs it again, and
		// finds its work done.
		logger.WarnContext(base, "idempotency key not recorded", "err", err)
	}
	return nil
}

// keepable reports whether an answer is the request's to keep. A 5xx is
// not (a repeat runs the request again, finding what this run stored); nor
// is a 403, which is about the API key that sent the request, while keys
// belong to the organization: another of its keys, allowed, must get the
// write done.
func keepable(status int) bool {
	return status < 500 && status != fiber.StatusForbidden
}

// recording is the context an answer is recorded in: its own, since the
// run's may have ended.
func recording(base context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(base), 5*time.Second)
}

// replay answers with a recorded answer.
func replay(c *fiber.Ctx, a idempotency.Answer) {
	c.Status(a.Status)
	for name, values := range a.Header {
		for _, v := range values {
			c.Response().Header.Add(name, v)
		}
	}
	c.Set("Idempotent-Replayed", "true")
	c.Response().SetBody(a.Body)
}

// keptHeaders are the answer's headers worth replaying.
func keptHeaders(c *fiber.Ctx) map[string][]string {
	out := map[string][]string{}
	for name, values := range c.GetRespHeaders() {
		skip := false
		for _, n := range notReplayed {
			if strings.EqualFold(name, n) {
				skip = true
				break
			}
		}
		if !skip {
			out[name] = values
		}
	}
	return out
}

// validIdempotencyKey accepts 1 to 255 visible ASCII characters: any
// client's key format (UUIDs, ULIDs, hashes, "order-42") and nothing a log
// or a header would have to escape.
func validIdempotencyKey(key string) bool {
	if key == "" || len(key) > maxIdempotencyKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}
