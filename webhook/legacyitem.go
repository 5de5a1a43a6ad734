package webhook

import (
	"encoding/json"
	"fmt"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventshape"
)

// LegacyItem renders a delivery's data as the /v0 event item list renders
// the item (api.md 6: the legacy layout of 2.9 without sourceType), with
// every occurrence and the clock at the moment of the add, so the body is
// a function of the log.
func LegacyItem(item domain.EventItemAdded, d domain.EventDetails) (json.RawMessage, error) {
	static, err := eventshape.RenderStatic(d, true)
	if err != nil {
		return nil, fmt.Errorf("render event %s: %w", item.EventID, err)
	}
	it := eventshape.Item{
		ID: item.ItemID, EventID: item.EventID, AddedAt: item.At, SourceType: string(item.SourceType),
		Static: static, Occurrences: eventshape.Everything(eventshape.Flatten(d), item.At),
	}
	return eventshape.AppendLegacy(nil, it, false), nil
}
