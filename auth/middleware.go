package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The strategy name api.md section 5 requires in every 401 text.
const failurePrefix = "Authentication failed (api-key): "

// principalKey is the c.Locals key of the Principal; an unexported type so
// no other package can overwrite it by accident.
type principalKey struct{}

// authFailure is the flat 401 body of api.md section 5.
type authFailure struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Code    string `json:"code"`
}

// errorBody is the nested body every non-401 error uses (api.md section 7).
type errorBody struct {
	Success bool        `json:"success"`
	Error   errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Middleware authenticates every request with `Authorization: Bearer <key>`
// and stores the Principal for PrincipalFrom. Failures answer 401 with the
// flat body of api.md section 5; a database failure answers 500, because
// telling a valid client its key is bad would send it to the operator for
// nothing.
//
// With requireHTTPS, a request that did not arrive over TLS answers 401
// before the key is looked at. It relies on c.Protocol(), which honours
// X-Forwarded-Proto only from trusted proxies when the app sets
// EnableTrustedProxyCheck; without that setting Fiber trusts every peer, so
// any client could claim HTTPS with a header.
func Middleware(store *Store, requireHTTPS bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if requireHTTPS && !strings.EqualFold(c.Protocol(), "https") {
			return unauthorized(c, "HTTPS is required")
		}
		header := c.Get(fiber.HeaderAuthorization)
		if strings.TrimSpace(header) == "" {
			return unauthorized(c, "missing Authorization header")
		}
		scheme, token, _ := strings.Cut(strings.TrimSpace(header), " ")
		// The scheme is case-insensitive (RFC 9110 section 11.1).
		if !strings.EqualFold(scheme, "Bearer") {
			return unauthorized(c, "Authorization header must use the Bearer scheme")
		}
		token = strings.TrimSpace(token)
		if token == "" {
			return unauthorized(c, "missing API key after Bearer")
		}

		p, err := store.Authenticate(c.UserContext(), token)
		switch {
		case err == nil:
		case errors.Is(err, ErrMalformedKey),
			errors.Is(err, ErrUnknownKey),
			errors.Is(err, ErrKeyExpired),
			errors.Is(err, ErrKeyRevoked):
			return unauthorized(c, err.Error())
		default:
			slog.ErrorContext(c.UserContext(), "authenticate api key", "error", err, "path", c.Path())
			return c.Status(fiber.StatusInternalServerError).JSON(errorBody{
				Error: errorDetail{Code: "INTERNAL_ERROR", Message: "Authentication could not be checked; please retry"},
			})
		}
		c.Locals(principalKey{}, p)
		return c.Next()
	}
}

func unauthorized(c *fiber.Ctx, reason string) error {
	// RFC 6750 asks for a challenge on 401 so generic clients know to send a
	// bearer token.
	c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="feedsvc"`)
	return c.Status(fiber.StatusUnauthorized).JSON(authFailure{
		Error: failurePrefix + reason,
		Code:  "AUTHENTICATION_FAILED",
	})
}

// PrincipalFrom returns the caller Middleware authenticated.
func PrincipalFrom(c *fiber.Ctx) (Principal, bool) {
	p, ok := c.Locals(principalKey{}).(Principal)
	return p, ok
}

// RequireScope answers 403 PERMISSION_DENIED unless the caller's key has
// scope s. It must run after Middleware.
func RequireScope(s Scope) fiber.Handler { return RequireAnyScope(s) }

// RequireAnyScope answers 403 PERMISSION_DENIED unless the caller's key has
// at least one of scopes (routes shared by two endpoint groups). It must
// run after Middleware.
func RequireAnyScope(scopes ...Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := PrincipalFrom(c)
		if !ok {
			// A route wired without Middleware is a programming error; refuse
			// loudly instead of serving it unauthenticated.
			slog.ErrorContext(c.UserContext(), "auth.RequireScope used on a route without auth.Middleware", "path", c.Path())
			return c.Status(fiber.StatusInternalServerError).JSON(errorBody{
				Error: errorDetail{Code: "INTERNAL_ERROR", Message: "Internal server error"},
			})
		}
		for _, s := range scopes {
			if p.Has(s) {
				return c.Next()
			}
		}
		return c.Status(fiber.StatusForbidden).JSON(errorBody{
			Error: errorDetail{
				Code:    "PERMISSION_DENIED",
				Message: fmt.Sprintf("This API key does not have the %q scope", FormatScopes(scopes)),
			},
		})
	}
}
