package http

import "time"

// timestamp renders the API's time format: UTC, millisecond precision.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
