package http

import (
	"time"

	"github.com/feedsvc/feedsvc/eventshape"
)

// timestamp renders the API's time format, the one every shape uses.
func timestamp(t time.Time) string { return eventshape.Timestamp(t) }
