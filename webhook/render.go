package webhook

import (
	"encoding/json"

	"github.com/feedsvc/feedsvc/domain"
)

// Render makes the data member of an event.item_added delivery
// (shape.ItemAddedData unless a test says otherwise) from the add and the
// happening's details as they stood when it was added.
// It must depend on nothing else (no clock, no reads), so the body is a
// function of the log: it is rendered once, when the delivery is queued,
// and every attempt and redelivery sends those exact bytes.
type Render func(item domain.HappeningItemAdded, details domain.HappeningDetails) (json.RawMessage, error)
