package webhook

import (
	"encoding/json"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

// Render makes the data member of an event.item_added delivery: the event
// item in the legacy layout of api.md 2.9 without sourceType (api.md 6),
// from the add and the event's details as they stood when it was added.
// It must depend on nothing else (no clock, no reads), so the body is a
// function of the log: it is rendered once, when the delivery is queued,
// and every attempt and redelivery sends those exact bytes.
type Render func(item domain.HappeningItemAdded, details domain.HappeningDetails) (json.RawMessage, error)

// stamp is the API's time format (D2).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
