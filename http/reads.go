package http

import (
	"context"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/feedsubscriptions"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/insights"
	"github.com/feedsvc/feedsvc/readmodel/negativesources"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/sources"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
)

// The API reads through the queries below, each what it asks of one read
// model; the read model's own Queries type (readmodel/<name>) answers it,
// and the wiring (service/service.go) hands them in. So the API holds no
// database handle and names no table (internal/layers checks it).

// Reads are the read models the API answers from.
type Reads struct {
	Feeds           FeedQueries
	Sources         SourceQueries
	News            NewsItemQueries
	Happenings      EventItemQueries
	Insights        InsightQueries
	NegativeSources NegativeSourceQueries
	Webhooks        WebhookQueries
	// Items find an item of a feed of either kind, the ones that left
	// their feed too (readmodel.Lookups).
	Items ItemQueries
	// Subscriptions are the feeds' secret addresses (subscriptions.go).
	Subscriptions SubscriptionQueries
	// Log is the organizations' logs (orglog.go).
	Log LogQueries
	// Extracts are the analysis extracts (extracts.go).
	Extracts ExtractQueries
	// Copies are news items' copies (copies.go).
	Copies CopyQueries
}

// FeedQueries read feeds and their attachments (readmodel/feeds).
type FeedQueries interface {
	Feeds(ctx context.Context, kind domain.FeedKind, org uuid.UUID) ([]feeds.Feed, error)
	Feed(ctx context.Context, kind domain.FeedKind, org, id uuid.UUID) (feeds.Feed, error)
	MissingFeed(ctx context.Context, kind domain.FeedKind, org uuid.UUID, ids []uuid.UUID) (uuid.UUID, bool, error)
	FeedSources(ctx context.Context, kind domain.FeedKind, org, feedID uuid.UUID) ([]feeds.FeedSource, error)
	// Gone are the feeds of ids that were deleted (the live streams end).
	Gone(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error)
}

// SourceQueries read source records (readmodel/sources).
type SourceQueries interface {
	Sources(ctx context.Context, org uuid.UUID) ([]sources.Source, error)
	Source(ctx context.Context, org, id uuid.UUID) (sources.Source, error)
}

// ItemChanges say where feeds' item lists last changed, for the live item
// streams: each kind's item read model answers them.
type ItemChanges interface {
	LatestChange(ctx context.Context, feedID uuid.UUID) (changes.Key, error)
	LatestChanges(ctx context.Context, feedIDs []uuid.UUID) (map[uuid.UUID]changes.Key, error)
}

// NewsItemQueries read news feeds' items (readmodel/newsitems).
type NewsItemQueries interface {
	NewsItems(ctx context.Context, org, feedID uuid.UUID, f newsitems.ItemFilter) (newsitems.ItemPage, error)
	NewsItem(ctx context.Context, org, feedID, itemID uuid.UUID) (newsitems.NewsItem, error)
	ItemChanges
}

// EventItemQueries read event feeds' items and the calendar events they
// are of (readmodel/happeningitems).
type EventItemQueries interface {
	Items(ctx context.Context, org, feedID uuid.UUID, f happeningitems.Filter) (happeningitems.Page, error)
	Item(ctx context.Context, org, feedID, itemID uuid.UUID, s happeningitems.Shape) (happeningitems.Item, error)
	CalendarHappenings(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]happeningitems.CalendarHappening, error)
	ItemChanges
}

// InsightQueries read the feedback insights (readmodel/insights).
type InsightQueries interface {
	FeedbackInsights(ctx context.Context, org uuid.UUID, f insights.FeedbackInsightFilter) (insights.FeedbackInsightPage, error)
}

// NegativeSourceQueries read the sources rated worst
// (readmodel/negativesources).
type NegativeSourceQueries interface {
	NegativeSources(ctx context.Context, org uuid.UUID, minFeedback, limit, offset int) (negativesources.SourceRatingPage, error)
}

// WebhookQueries read webhook registrations (readmodel/webhooks).
type WebhookQueries interface {
	Webhooks(ctx context.Context, org uuid.UUID) ([]webhooks.Webhook, error)
	Webhook(ctx context.Context, org, id uuid.UUID) (webhooks.Webhook, error)
}

// ItemQueries find an item of a feed of either kind (readmodel.Lookups).
type ItemQueries interface {
	// ItemOrigin finds an item the feed ever had, one that left it too.
	ItemOrigin(ctx context.Context, kind domain.FeedKind, org, feedID, itemID uuid.UUID) (domain.ItemRef, error)
}

// SubscriptionQueries read the feeds' secret addresses
// (readmodel/feedsubscriptions).
type SubscriptionQueries interface {
	List(ctx context.Context, org uuid.UUID, kind domain.FeedKind, feedID uuid.UUID) ([]feedsubscriptions.Subscription, error)
	Authenticate(ctx context.Context, prefix string, secret []byte) (feedsubscriptions.Subscription, error)
}

// itemChanges are the item changes of a feed kind.
func (r Reads) itemChanges(kind domain.FeedKind) ItemChanges {
	if kind == domain.FeedHappenings {
		return r.Happenings
	}
	return r.News
}
