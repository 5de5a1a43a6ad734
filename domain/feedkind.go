package domain

// FeedKind is what a feed collects: news items or events. Feed commands,
// events, attachments and items are shared by every kind; the kind selects
// the event names, the stream and the intake (ingest/intake).
type FeedKind string

const (
	FeedNews       FeedKind = "news"
	FeedHappenings FeedKind = "events"
)

// FeedKinds are every kind, for registries that must cover each.
var FeedKinds = []FeedKind{FeedNews, FeedHappenings}

// eventPrefix names a kind's events: NewsFeedCreated, EventFeedCreated.
func (k FeedKind) eventPrefix() string {
	if k == FeedHappenings {
		return "Event"
	}
	return "News"
}
