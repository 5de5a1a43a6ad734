package shape

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

// Delivery is the body every webhook delivery posts (api.md 6).
type Delivery struct {
	Event     string          `json:"event"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// DeliveryBody is the body of a delivery of event, stamped at.
func DeliveryBody(event string, at time.Time, data json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(Delivery{Event: event, Timestamp: Timestamp(at), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode %s delivery: %w", event, err)
	}
	return b, nil
}

// ItemAddedData is the data of an event.item_added delivery: the event item
// as the /v0 event item list renders it, without sourceType (api.md 6), with
// every occurrence and the clock at the moment of the add, so the body is a
// function of the log.
func ItemAddedData(item domain.HappeningItemAdded, d domain.HappeningDetails) (json.RawMessage, error) {
	it, err := Standalone(d, true, item.ItemID, item.HappeningID, item.At)
	if err != nil {
		return nil, err
	}
	return AppendLegacy(nil, it, false), nil
}
