package domain

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Name and description limits. The spec sets only the minimum; the maximum
// keeps a single feed from bloating every list response.
const (
	maxNameLength        = 200
	maxDescriptionLength = 2000
)

// Text is a trimmed, non-empty, bounded string: a feed name or description.
func newText(field, value string, max int) (string, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return "", invalid(field, "must be at least 1 character")
	}
	if utf8.RuneCountInString(v) > max {
		return "", invalid(field, "must be at most "+strconv.Itoa(max)+" characters")
	}
	return v, nil
}

// Now truncates to the millisecond precision the API speaks, so a value read
// back from an event equals the one that was decided on.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
