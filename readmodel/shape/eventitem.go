package shape

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/uuidtext"
)

// Item is what an event item is rendered from.
type Item struct {
	ID          uuid.UUID
	HappeningID uuid.UUID
	AddedAt     time.Time
	SourceType  string
	// Static is the happening's static members in the shape being rendered.
	Static Static
	// Source is the source block (SourceBlock); the current shape shows it
	// when set (include=source).
	Source []byte
	// Occurrences is the block for the query that asks (InWindow or
	// Everything).
	Occurrences Occurrences
	// Relevance is the score against the feed's config; nil when the feed
	// is not scored. Current shape only.
	Relevance *float64
}

// Standalone is the item of a happening no feed's read model holds (the
// webhook's data, the happenings of a parsed page), in one shape: every
// occurrence, as the single item shows them, judged at the time it was
// added.
func Standalone(d domain.HappeningDetails, legacy bool, id, happeningID uuid.UUID, addedAt time.Time) (Item, error) {
	static, err := RenderStatic(d, legacy)
	if err != nil {
		return Item{}, fmt.Errorf("render event %s: %w", happeningID, err)
	}
	return Item{
		ID: id, HappeningID: happeningID, AddedAt: addedAt,
		Static: static, Occurrences: Everything(Flatten(d), addedAt),
	}, nil
}

// AppendCurrent appends the item in the current shape (api.md 2.9): absent
// optional members omitted, arrays always present, relevanceScore when
// scored and source when set.
func AppendCurrent(b []byte, it Item) []byte {
	b = append(b, '{')
	b = appendCommon(b, it, false)
	if len(it.Source) > 0 {
		b = append(b, `,"source":`...)
		b = append(b, it.Source...)
	}
	return append(b, '}')
}

// AppendLegacy appends the item in the legacy shape: nulls for absent
// members, no source and no relevanceScore, and sourceType at the root
// when withSourceType. The v0 list shows it; the event.item_added
// webhook's data is it without sourceType (api.md 6).
func AppendLegacy(b []byte, it Item, withSourceType bool) []byte {
	b = append(b, '{')
	if withSourceType {
		b = append(b, `"sourceType":`...)
		b = appendString(b, it.SourceType)
		b = append(b, ',')
	}
	it.Relevance = nil
	b = appendCommon(b, it, true)
	return append(b, '}')
}

// appendCommon writes the members both shapes have, in the order of 2.9.
func appendCommon(b []byte, it Item, legacy bool) []byte {
	b = append(b, `"id":"`...)
	b = uuidtext.Append(b, it.ID)
	b = append(b, `","eventId":"`...)
	b = uuidtext.Append(b, it.HappeningID)
	b = append(b, `",`...)
	b = append(b, it.Static.Head...)
	if r := it.Relevance; r != nil && !math.IsNaN(*r) && !math.IsInf(*r, 0) {
		b = append(b, `,"relevanceScore":`...)
		b = strconv.AppendFloat(b, *r, 'f', -1, 64)
	}
	b = append(b, `,"addedToFeedAt":"`...)
	b = appendTimestamp(b, it.AddedAt)
	b = append(b, '"')
	if len(it.Static.Published) > 0 {
		b = append(b, ',')
		b = append(b, it.Static.Published...)
	}
	b = append(b, `,"occurrence":`...)
	b = appendBlock(b, it.Occurrences, legacy)
	b = append(b, ',')
	return append(b, it.Static.Tail...)
}

// appendBlock writes the occurrence block; nextOccurrence and endDateTime
// are omitted when absent in the current shape and null in the legacy one.
func appendBlock(b []byte, o Occurrences, legacy bool) []byte {
	b = append(b, '{')
	switch {
	case o.Next != nil:
		b = append(b, `"nextOccurrence":`...)
		b = appendEntry(b, *o.Next, legacy)
		b = append(b, ',')
	case legacy:
		b = append(b, `"nextOccurrence":null,`...)
	}
	b = append(b, `"occurrencesInRange":[`...)
	for i, e := range o.Selected {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, e, legacy)
	}
	b = append(b, `],"totalOccurrences":`...)
	b = strconv.AppendInt(b, int64(len(o.Selected)), 10)
	b = append(b, `,"upcomingOccurrences":`...)
	b = strconv.AppendInt(b, int64(o.Upcoming), 10)
	return append(b, '}')
}

func appendEntry(b []byte, e Entry, legacy bool) []byte {
	b = append(b, `{"id":"`...)
	b = uuidtext.Append(b, e.ID)
	b = append(b, `","instanceId":"`...)
	b = uuidtext.Append(b, e.InstanceID)
	b = append(b, `","startDateTime":"`...)
	b = appendTimestamp(b, e.Start)
	b = append(b, '"')
	switch {
	case e.End != nil:
		b = append(b, `,"endDateTime":"`...)
		b = appendTimestamp(b, *e.End)
		b = append(b, '"')
	case legacy:
		b = append(b, `,"endDateTime":null`...)
	}
	b = append(b, `,"status":`...)
	b = appendString(b, e.Status)
	return append(b, '}')
}

// appendString writes s as a JSON string.
func appendString(b []byte, s string) []byte {
	if plain(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	q, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...)
	}
	return append(b, q...)
}

// RelevanceFunc scores a happening against an event feed's config (D9); false
// when the config gives nothing to score by.
type RelevanceFunc func(d domain.HappeningDetails, cfg domain.FeedConfig) (float64, bool)

// Scores reports whether f may score happenings against cfg: a feed with
// neither geo nor keywords is never scored (relevanceScore is omitted), so
// its lists need not read happenings' details.
func (f RelevanceFunc) Scores(cfg domain.FeedConfig) bool {
	return f != nil && (cfg.Geo != nil || len(cfg.Keywords) > 0)
}

// Score is f's score of d against cfg, nil when it does not score.
func (f RelevanceFunc) Score(d domain.HappeningDetails, cfg domain.FeedConfig) *float64 {
	if !f.Scores(cfg) {
		return nil
	}
	score, ok := f(d, cfg)
	if !ok {
		return nil
	}
	return &score
}

// plain: s needs no escaping in JSON (statuses and source types always).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
