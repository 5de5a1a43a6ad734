package http

import (
	"time"

	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// timestamp renders the API's time format, the one every shape uses.
func timestamp(t time.Time) string { return shape.Timestamp(t) }
