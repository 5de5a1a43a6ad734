// Package http is the JSON API on Fiber: thin handlers that decode a
// request, run a command or a query, and answer in the envelopes of the
// contract (api.md section 7).
package http

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/projections"
)

// Error codes of the news endpoints (api.md 7). Event endpoints, when they
// come, name 400 and 500 differently (BAD_REQUEST, INTERNAL_SERVER_ERROR).
const (
	codeValidation = "VALIDATION_ERROR"
	codeNotFound   = "NOT_FOUND"
	codeConflict   = "CONFLICT"
	codeInternal   = "INTERNAL_ERROR"
	codeMethod     = "METHOD_NOT_ALLOWED"
	// Transport answers no route decides; the same in both dialects.
	codeTimeout     = "REQUEST_TIMEOUT"
	codeTooMany     = "TOO_MANY_REQUESTS"
	codeUnavailable = "SERVICE_UNAVAILABLE"
)

// apiError is an error that knows its HTTP answer.
type apiError struct {
	status   int
	code     string
	message  string
	resource string
	id       string
	field    string
	issue    string
}

func (e *apiError) Error() string { return e.message }

type errorBody struct {
	Success bool        `json:"success"`
	Error   errorDetail `json:"error"`
}

type errorDetail struct {
	Code     string        `json:"code"`
	Message  string        `json:"message"`
	Resource string        `json:"resource,omitempty"`
	ID       string        `json:"id,omitempty"`
	Details  *errorDetails `json:"details,omitempty"`
}

type errorDetails struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

func badRequest(field, issue string) *apiError {
	return &apiError{status: fiber.StatusBadRequest, message: field + ": " + issue, field: field, issue: issue}
}

func notFound(resource, id string) *apiError {
	return &apiError{status: fiber.StatusNotFound, code: codeNotFound, message: resource + " not found", resource: resource, id: id}
}

// classify maps domain and infrastructure errors to their HTTP answer.
func classify(err error) *apiError {
	var api *apiError
	var validation *domain.ValidationError
	var missing *domain.NotFoundError
	var conflict *domain.ConflictError
	switch {
	case errors.As(err, &api):
		return api
	case errors.As(err, &validation):
		return badRequest(validation.Field, validation.Issue)
	case errors.As(err, &missing):
		return notFound(missing.Resource, missing.ID)
	case errors.As(err, &conflict):
		return &apiError{status: fiber.StatusConflict, code: codeConflict, message: conflict.Message}
	case errors.Is(err, domain.ErrUnsupported):
		return &apiError{status: fiber.StatusBadRequest, message: err.Error(), field: "sourceType", issue: "not yet supported"}
	case errors.Is(err, eventstore.ErrWrongExpectedVersion):
		// Retries ran out against concurrent writers; nothing was stored.
		return &apiError{status: fiber.StatusServiceUnavailable, code: codeInternal,
			message: "the resource is being changed by many requests at once; nothing was changed, retry shortly"}
	case errors.Is(err, projections.ErrLagging):
		return &apiError{status: fiber.StatusServiceUnavailable, code: codeInternal,
			message: "the change was saved but is not visible yet; it will appear shortly, do not repeat the request"}
	}
	return &apiError{status: fiber.StatusInternalServerError, message: "unexpected failure, retrying is advised"}
}

func (e *apiError) body() errorBody {
	code := e.code
	if code == "" {
		code = defaultCode(e.status)
	}
	d := errorDetail{Code: code, Message: e.message, Resource: e.resource, ID: e.id}
	if e.field != "" {
		d.Details = &errorDetails{Field: e.field, Issue: e.issue}
	}
	return errorBody{Error: d}
}

func defaultCode(status int) string {
	switch status {
	case fiber.StatusBadRequest, fiber.StatusRequestEntityTooLarge,
		fiber.StatusUnsupportedMediaType, fiber.StatusRequestHeaderFieldsTooLarge:
		return codeValidation
	case fiber.StatusNotFound:
		return codeNotFound
	case fiber.StatusMethodNotAllowed:
		return codeMethod
	case fiber.StatusRequestTimeout:
		return codeTimeout
	case fiber.StatusTooManyRequests:
		return codeTooMany
	}
	return codeInternal
}

type okBody struct {
	Success bool `json:"success"`
	Data    any  `json:"data,omitempty"`
}

func ok(c *fiber.Ctx, status int, data any) error {
	return c.Status(status).JSON(okBody{Success: true, Data: data})
}

func deleted(c *fiber.Ctx) error {
	return c.Status(fiber.StatusOK).JSON(okBody{Success: true})
}

// stored tells the client the id of what a create stored when its read
// models lag (503), so it can fetch it later instead of creating it again.
func stored(err error, resource, id string) error {
	if !errors.Is(err, projections.ErrLagging) {
		return err
	}
	e := classify(err)
	e.resource, e.id = resource, id
	return e
}

// timestamp renders the API's time format: UTC, millisecond precision.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
