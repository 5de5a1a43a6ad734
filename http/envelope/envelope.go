// Package envelope renders every answer of the API in the contract's
// envelopes (api.md section 7): `{success, data}` for results and
// `{success: false, error: {code, message, ...}}` for errors, in the dialect
// of the route group that answers. News endpoints say VALIDATION_ERROR and
// INTERNAL_ERROR and name the missing resource; event endpoints say
// BAD_REQUEST and INTERNAL_SERVER_ERROR. Everything that fails a request
// (handlers, auth, the framework) returns an error, and ErrorHandler is the
// one place that turns it into an answer.
package envelope

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/database"
)

// Dialect is how a route group names its errors.
type Dialect struct {
	badRequest string
	internal   string
	// namesResources adds resource and id to 404 bodies.
	namesResources bool
}

var (
	// News is the dialect of news feeds, their items, and everything that
	// is not an event endpoint.
	News = Dialect{badRequest: "VALIDATION_ERROR", internal: "INTERNAL_ERROR", namesResources: true}
	// Events is the dialect of event feeds and their items.
	Events = Dialect{badRequest: "BAD_REQUEST", internal: "INTERNAL_SERVER_ERROR"}
)

// For is the dialect of the route that serves path: Events for every path
// under /feeds/events and /v0/feeds/events, News for every other. It is
// decided from the path alone, as written (escapes, dot segments and
// doubled slashes included) and read the way HTTP reads a path (escapes
// decoded, dot segments resolved, doubled slashes as one, RFC 3986 6.2.2),
// without regard to case and with trailing slashes ignored, so that an
// answer written before any route runs (by the transport, a connection
// cap, the body limit, the query check, authentication, the rate limit, a
// recovered panic) speaks the dialect of the path the client named, the
// same as the route would have.
func For(path string) Dialect {
	var u fasthttp.URI
	u.SetPath(path)
	p := strings.ToLower(string(u.Path()))
	for _, prefix := range []string{"/feeds/events", "/v0/feeds/events"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok && (rest == "" || rest[0] == '/') {
			return Events
		}
	}
	return News
}

// Fixed codes, the same in every dialect.
const (
	CodeNotFound         = "NOT_FOUND"
	CodeConflict         = "CONFLICT"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodePermissionDenied = "PERMISSION_DENIED"
	CodeAuthentication   = "AUTHENTICATION_FAILED"
	// CodeNotImplemented answers a capability the service does not offer.
	CodeNotImplemented = "NOT_IMPLEMENTED"
	// Transport answers no route decides.
	CodeTimeout     = "REQUEST_TIMEOUT"
	CodeTooMany     = "TOO_MANY_REQUESTS"
	CodeUnavailable = "SERVICE_UNAVAILABLE"
)

// Error is a failure that knows its answer. Code is left empty where the
// dialect names it (400, 413, 5xx).
type Error struct {
	Status   int
	Code     string
	Message  string
	Resource string
	ID       string
	Field    string
	Issue    string
	// flat is the 401 body of api.md section 5: error is the text and code
	// sits at the root.
	flat bool
}

func (e *Error) Error() string { return e.Message }

// BadRequest names the field at fault and what is wrong with it.
func BadRequest(field, issue string) *Error {
	return &Error{Status: fiber.StatusBadRequest, Message: field + ": " + issue, Field: field, Issue: issue}
}

// NotFound names the missing resource.
func NotFound(resource, id string) *Error {
	return &Error{Status: fiber.StatusNotFound, Code: CodeNotFound, Message: resource + " not found", Resource: resource, ID: id}
}

// Unauthorized is the flat 401 of api.md section 5; reason follows the
// strategy name the contract requires.
func Unauthorized(reason string) *Error {
	return &Error{Status: fiber.StatusUnauthorized, Code: CodeAuthentication, Message: "Authentication failed (api-key): " + reason, flat: true}
}

// Forbidden is a valid key without the permission a route needs.
func Forbidden(message string) *Error {
	return &Error{Status: fiber.StatusForbidden, Code: CodePermissionDenied, Message: message}
}

// Answerer is a failure of a layer below the API that knows its answer
// (commands.ErrBusy, commands.ErrLagging): Classify finds one anywhere in
// an error's chain by these methods, so that this package depends on no
// package that fails.
type Answerer interface {
	error
	// Status is the answer's HTTP status.
	Status() int
	// Code is the error code, or "" for the one the dialect gives the
	// status.
	Code() string
	// Message is what the client reads.
	Message() string
}

// Classify maps domain, framework and Answerer errors to their answer.
func Classify(err error) *Error {
	var e *Error
	var answerer Answerer
	var validation *domain.ValidationError
	var missing *domain.NotFoundError
	var conflict *domain.ConflictError
	var fe *fiber.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &fe):
		return framework(fe)
	case errors.As(err, &validation):
		return BadRequest(validation.Field, validation.Issue)
	case errors.As(err, &missing):
		e := NotFound(missing.Resource, missing.ID)
		if missing.Reason != "" {
			e.Message += ": " + missing.Reason
		}
		return e
	case errors.As(err, &conflict):
		return &Error{Status: fiber.StatusConflict, Code: CodeConflict, Message: conflict.Message}
	case errors.Is(err, domain.ErrUnsupported):
		return &Error{Status: fiber.StatusBadRequest, Message: err.Error(), Field: "sourceType", Issue: "not yet supported"}
	case errors.Is(err, domain.ErrSourceUnavailable):
		return &Error{Status: fiber.StatusServiceUnavailable,
			Message: "the source's platform did not answer or asked to wait; nothing was stored, retry shortly"}
	// Before the database and the deadline: a lagging write says so even
	// when its wait ran out of time.
	case errors.As(err, &answerer):
		return &Error{Status: answerer.Status(), Code: answerer.Code(), Message: answerer.Message()}
	case database.Unavailable(err):
		return &Error{Status: fiber.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "the service's database is busy or unreachable; retry shortly (a write with the same Idempotency-Key, so that it is made once)"}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: fiber.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "the request took longer than the service allows; retry, or narrow it (a feed, a time range)"}
	}
	return &Error{Status: fiber.StatusInternalServerError, Message: "unexpected failure, retrying is advised"}
}

// framework maps the framework's own errors. Only the status is kept: a
// fiber.Error's message may quote the request.
func framework(fe *fiber.Error) *Error { return ForStatus(fe.Code) }

// ForStatus is our own answer for a status the transport or the framework
// decided, never quoting what they said.
func ForStatus(status int) *Error {
	switch status {
	case fiber.StatusBadRequest:
		return &Error{Status: status, Message: "the request is not well-formed HTTP/1.1", Field: "request", Issue: "is not well-formed HTTP/1.1"}
	case fiber.StatusNotFound:
		return &Error{Status: status, Code: CodeNotFound, Message: "no such route"}
	case fiber.StatusMethodNotAllowed:
		return &Error{Status: status, Code: CodeMethodNotAllowed, Message: "method not allowed"}
	case fiber.StatusRequestTimeout:
		return &Error{Status: status, Code: CodeTimeout, Message: "the request did not arrive in time"}
	case fiber.StatusRequestEntityTooLarge:
		return &Error{Status: status, Message: "request body is too large", Field: "body", Issue: "too large"}
	case fiber.StatusRequestHeaderFieldsTooLarge:
		return &Error{Status: status, Message: "the request line and headers are too large", Field: "headers", Issue: "must fit in 8 KiB together"}
	}
	if status < 500 {
		return &Error{Status: status, Message: "the request was refused: " + fasthttp.StatusMessage(status)}
	}
	return &Error{Status: status, Message: "unexpected failure, retrying is advised"}
}

// Naming is err's answer naming a resource and its id: a create whose
// change was stored but is not visible yet tells the client the id, so it
// can fetch it later instead of creating it again.
func Naming(err error, resource, id string) *Error {
	e := *Classify(err)
	e.Resource, e.ID = resource, id
	return &e
}

// Status is the status err will be answered with.
func Status(err error) int { return Classify(err).Status }

// ErrorHandler is the app's one error renderer.
func ErrorHandler(logger *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		e := Classify(err)
		// A 501 is an answer (a capability the service does not offer), not
		// a failure to look into.
		if e.Status >= 500 && e.Status != fiber.StatusNotImplemented {
			logger.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "path", c.Path(), "status", e.Status, "err", err)
		}
		if e.Status == fiber.StatusUnauthorized {
			// RFC 6750 asks for a challenge on 401 so generic clients know
			// to send a bearer token.
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="feedsvc"`)
		}
		// Every 503 passes (a database at its limit, a read past its
		// deadline, a lagging read model): say when to come back.
		if e.Status == fiber.StatusServiceUnavailable && len(c.Response().Header.Peek(fiber.HeaderRetryAfter)) == 0 {
			c.Set(fiber.HeaderRetryAfter, "1")
		}
		return c.Status(e.Status).JSON(e.Body(For(c.Path())))
	}
}

type errorBody struct {
	Success bool        `json:"success"`
	Error   errorDetail `json:"error"`
}

type errorDetail struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Resource string   `json:"resource,omitempty"`
	ID       string   `json:"id,omitempty"`
	Details  *details `json:"details,omitempty"`
}

type details struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

type flatBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Code    string `json:"code"`
}

// Body is the JSON body of the answer in dialect d.
func (e *Error) Body(d Dialect) any {
	if e.flat {
		return flatBody{Error: e.Message, Code: e.Code}
	}
	out := errorDetail{Code: e.code(d), Message: e.Message}
	if d.namesResources || e.Status != fiber.StatusNotFound {
		out.Resource, out.ID = e.Resource, e.ID
	}
	if e.Field != "" {
		out.Details = &details{Field: e.Field, Issue: e.Issue}
	}
	return errorBody{Error: out}
}

func (e *Error) code(d Dialect) string {
	switch {
	case e.Code != "":
		return e.Code
	case e.Status == fiber.StatusNotFound:
		return CodeNotFound
	case e.Status == fiber.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case e.Status == fiber.StatusBadRequest, e.Status == fiber.StatusRequestEntityTooLarge,
		e.Status == fiber.StatusUnsupportedMediaType, e.Status == fiber.StatusRequestHeaderFieldsTooLarge,
		e.Status == fiber.StatusUnprocessableEntity:
		return d.badRequest
	case e.Status == fiber.StatusRequestTimeout:
		return CodeTimeout
	case e.Status == fiber.StatusTooManyRequests:
		return CodeTooMany
	}
	return d.internal
}

type okBody struct {
	Success bool `json:"success"`
	Data    any  `json:"data,omitempty"`
}

// OK answers a result.
func OK(c *fiber.Ctx, status int, data any) error {
	return c.Status(status).JSON(okBody{Success: true, Data: data})
}

// OKJSON answers a result already rendered as JSON (data must be valid
// JSON): for answers assembled from stored renderings, which encoding them
// again would only re-validate.
// The body is copied into the response, so data may be reused at once.
func OKJSON(c *fiber.Ctx, status int, data []byte) error {
	c.Status(status).Type("json")
	resp := c.Response()
	resp.ResetBody()
	resp.AppendBodyString(`{"success":true,"data":`)
	resp.AppendBody(data)
	resp.AppendBodyString("}")
	return nil
}

// Deleted answers a delete: `{success: true}` (api.md 4).
func Deleted(c *fiber.Ctx) error {
	return c.Status(fiber.StatusOK).JSON(okBody{Success: true})
}
