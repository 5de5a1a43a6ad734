package domain

import (
	"strconv"
	"strings"
	"time"
	"unicode"
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
	if hasStrayControl(v) {
		return "", invalid(field, "must not contain control characters")
	}
	if utf8.RuneCountInString(v) > max {
		return "", invalid(field, "must be at most "+strconv.Itoa(max)+" characters")
	}
	return v, nil
}

// isStrayControl is a control character other than a line break or tab.
// NUL above all: Postgres text and jsonb cannot store it.
func isStrayControl(r rune) bool {
	return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r'
}

func hasStrayControl(s string) bool { return strings.IndexFunc(s, isStrayControl) >= 0 }

// Now truncates to the millisecond precision the API speaks, so a value read
// back from an event equals the one that was decided on.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
