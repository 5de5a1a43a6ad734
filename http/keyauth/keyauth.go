// Package keyauth is the API's key authentication and rate limiting as
// Fiber middleware, over package auth's key store and limiter.
package keyauth

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/internal/auth"
)

// principalKey is the c.Locals key of the auth.Principal; an unexported type so
// no other package can overwrite it by accident.
type principalKey struct{}

// Middleware authenticates every request with `Authorization: Bearer <key>`
// and stores the auth.Principal for PrincipalFrom. Failures answer 401 with the
// flat body of api.md section 5 (rendered, like every error, by the app's
// envelope.ErrorHandler); a database failure answers 500, because
// telling a valid client its key is bad would send it to the operator for
// nothing.
//
// With requireHTTPS, a request that did not arrive over TLS answers 401
// before the key is looked at. It relies on c.Protocol(), which honours
// X-Forwarded-Proto only from trusted proxies when the app sets
// EnableTrustedProxyCheck; without that setting Fiber trusts every peer, so
// any client could claim HTTPS with a header.
func Middleware(store *auth.Store, requireHTTPS bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if requireHTTPS && !strings.EqualFold(c.Protocol(), "https") {
			return envelope.Unauthorized("HTTPS is required")
		}
		header := c.Get(fiber.HeaderAuthorization)
		if strings.TrimSpace(header) == "" {
			return envelope.Unauthorized("missing Authorization header")
		}
		scheme, token, _ := strings.Cut(strings.TrimSpace(header), " ")
		// The scheme is case-insensitive (RFC 9110 section 11.1).
		if !strings.EqualFold(scheme, "Bearer") {
			return envelope.Unauthorized("Authorization header must use the Bearer scheme")
		}
		token = strings.TrimSpace(token)
		if token == "" {
			return envelope.Unauthorized("missing API key after Bearer")
		}

		p, err := store.Authenticate(c.UserContext(), token)
		switch {
		case err == nil:
		case errors.Is(err, auth.ErrMalformedKey),
			errors.Is(err, auth.ErrUnknownKey),
			errors.Is(err, auth.ErrKeyExpired),
			errors.Is(err, auth.ErrKeyRevoked):
			return envelope.Unauthorized(err.Error())
		default:
			return fmt.Errorf("authentication could not be checked: %w", err)
		}
		c.Locals(principalKey{}, p)
		return c.Next()
	}
}

// PrincipalFrom returns the caller Middleware authenticated.
func PrincipalFrom(c *fiber.Ctx) (auth.Principal, bool) {
	p, ok := c.Locals(principalKey{}).(auth.Principal)
	return p, ok
}

// RequireScope answers 403 PERMISSION_DENIED unless the caller's key has
// scope s. It must run after Middleware.
func RequireScope(s auth.Scope) fiber.Handler { return RequireAnyScope(s) }

// RequireAnyScope answers 403 PERMISSION_DENIED unless the caller's key has
// at least one of scopes (routes shared by two endpoint groups). It must
// run after Middleware.
func RequireAnyScope(scopes ...auth.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := PrincipalFrom(c)
		if !ok {
			// A route wired without Middleware is a programming error; refuse
			// loudly instead of serving it unauthenticated.
			slog.ErrorContext(c.UserContext(), "auth.RequireScope used on a route without auth.Middleware", "path", c.Path())
			return errors.New("route served without authentication")
		}
		for _, s := range scopes {
			if p.Has(s) {
				return c.Next()
			}
		}
		return envelope.Forbidden(fmt.Sprintf("This API key does not have the %q scope", auth.FormatScopes(scopes)))
	}
}

// RateLimit counts every authenticated request against its key's rate and
// answers with the RateLimit-Limit, -Remaining and -Reset headers of the
// IETF draft (and RateLimit-Policy); past the limit it answers 429
// TOO_MANY_REQUESTS with Retry-After. It must run after Middleware. When
// the count cannot be taken in Postgres, the request is counted in this
// process and the limiter's FailureMode decides (a 503 with Retry-After,
// or the local count's answer); the failure is logged.
func RateLimit(l *auth.Limiter) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := PrincipalFrom(c)
		if !ok {
			return c.Next()
		}
		a := l.Admit(c.UserContext(), p)
		rate, u := a.Rate, a.Usage
		if rate.IsUnlimited() {
			return c.Next()
		}
		if a.Unavailable {
			c.Set(fiber.HeaderRetryAfter, "1")
			return &envelope.Error{Status: fiber.StatusServiceUnavailable, Code: envelope.CodeUnavailable,
				Message: "the request rate of this API key cannot be checked right now; retry shortly"}
		}
		reset := strconv.Itoa(u.Reset)
		c.Set("RateLimit-Limit", strconv.Itoa(rate.Limit))
		c.Set("RateLimit-Remaining", strconv.Itoa(u.Remaining()))
		c.Set("RateLimit-Reset", reset)
		c.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d", rate.Limit, int(rate.Window/time.Second)))
		if u.Allowed() {
			return c.Next()
		}
		c.Set(fiber.HeaderRetryAfter, reset)
		return &envelope.Error{Status: fiber.StatusTooManyRequests, Code: envelope.CodeTooMany,
			Message: fmt.Sprintf("rate limit exceeded: this API key may make %d requests every %d seconds; retry in %s seconds",
				rate.Limit, int(rate.Window/time.Second), reset)}
	}
}
