// Package domain holds the service's aggregates and the events they emit.
// It knows nothing of HTTP, SQL or messaging: invariants live here, and the
// adapters around it translate.
package domain

import (
	"errors"
	"fmt"
)

// ErrNotFound: the aggregate does not exist, was deleted, or belongs to
// another organization (which must be indistinguishable from not existing).
var ErrNotFound = errors.New("not found")

// ErrConflict: the change would duplicate something that must be unique.
var ErrConflict = errors.New("conflict")

// ErrUnsupported: a valid request the service does not handle yet.
var ErrUnsupported = errors.New("not yet supported")

// ValidationError names the offending field so clients can fix the request.
type ValidationError struct {
	Field string
	Issue string
}

func (e *ValidationError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Issue) }

func invalid(field, issue string) error { return &ValidationError{Field: field, Issue: issue} }

// ErrSourceUnavailable: a source could not be checked because the place it
// lives (a platform's API) did not answer, or asked to be left alone for a
// while. Nothing was stored; asking again later may succeed.
var ErrSourceUnavailable = errors.New("the source's platform did not answer")

// NotFoundError says which resource was missing, for the error envelope.
type NotFoundError struct {
	Resource string
	ID       string
	// Reason, when set, tells why (an account that is private); it never
	// quotes the request.
	Reason string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%s %s not found", e.Resource, e.ID)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(resource, id string) error { return &NotFoundError{Resource: resource, ID: id} }

// ConflictError says what already exists.
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string        { return e.Message }
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
