package transport

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/internal/logctx"
)

// maxRequestIDLen bounds a client's X-Request-Id: it is echoed in a header
// and written to every log line of the request.
const maxRequestIDLen = 128

// RequestID names each request: the client's X-Request-Id when it is sane
// (at most 128 characters of letters, digits and - _ . : + / = @), else a
// fresh UUID. The id is echoed in the answer and carried in the request's
// context, so every log line written with it names the request.
func RequestID(c *fiber.Ctx) error {
	id := assignRequestID(c)
	ctx := logctx.WithRequestID(c.UserContext(), id)
	// A read has a deadline: a query over a whole organization's history
	// must not hold a connection for as long as the client cares to wait.
	// Writes are bounded where they commit (consistency wait, idempotency
	// lease), and cutting one short mid-append would only turn a success
	// into a 503.
	if c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readDeadline)
		defer cancel()
	}
	c.SetUserContext(ctx)
	return c.Next()
}

// readDeadline bounds the work of one read request.
const readDeadline = 15 * time.Second

// assignRequestID picks the request's id and sets it on the answer. It
// also serves answers written outside the routes (a request the server
// could not read, a method it does not know).
func assignRequestID(c *fiber.Ctx) string {
	id := c.Get(fiber.HeaderXRequestID)
	// The id outlives the request in the context and in log records: it is
	// Fiber's copy (the app is Immutable, server.go).
	if !saneRequestID(id) {
		id = uuid.NewString()
	}
	c.Set(fiber.HeaderXRequestID, id)
	return id
}

// saneRequestID accepts ids that are safe to echo in a header and to write
// unquoted to a log: bounded, and of a charset no log or header parser
// treats specially.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch ch := id[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case ch == '-', ch == '_', ch == '.', ch == ':', ch == '+', ch == '/', ch == '=', ch == '@':
		default:
			return false
		}
	}
	return true
}
