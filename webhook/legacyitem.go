package webhook

import (
	"encoding/json"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// LegacyItem renders a delivery's data as the /v0 event item list renders
// the item (api.md 6: the legacy layout of 2.9 without sourceType), with
// every occurrence and the clock at the moment of the add, so the body is
// a function of the log.
func LegacyItem(item domain.HappeningItemAdded, d domain.HappeningDetails) (json.RawMessage, error) {
	it, err := shape.Standalone(d, true, item.ItemID, item.EventID, item.At)
	if err != nil {
		return nil, err
	}
	return shape.AppendLegacy(nil, it, false), nil
}
