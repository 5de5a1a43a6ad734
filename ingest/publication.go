package ingest

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// publicationDelay is how long after its stated publication an article
// became an item: what the poll interval promises, measured. It is
// observed once per item, when a crawl (or a WebSub push) adds it, never by
// a backfill or a projector, so a rebuild observes nothing again. Only
// articles whose page or listing states when they were published count,
// and only those published after their attachment began watching the
// source (attached, or enabled again): an article from before that waited
// for the attachment, not for the crawler.
var publicationDelay = newPublicationDelay()

func newPublicationDelay() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "feedsvc_item_publication_delay_seconds",
		Help: "Time from an article's stated publication to its item, for articles published while the source was watched, by source type.",
		// From what a push achieves to a day: the promise at the default
		// interval is 10 minutes, 2 for the busiest sources.
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 21600, 86400},
	}, []string{"source_type"})
}

// Metrics are the crawler's own instruments (the schedule's are read from
// the database: PollingCollector).
func Metrics() prometheus.Collector { return publicationDelay }

// observeAdded observes in delays the publication delay of the item an
// offer added at now.
func observeAdded(delays *prometheus.HistogramVec, o ArticleOffer, now time.Time) {
	published := o.Article.Content.PublishedAt
	// Stated dates mostly have whole seconds (RFC 1123, W3C dates): one
	// published in the second its attachment began watching counts.
	if published == nil || published.Before(watchedSince(o.To).Truncate(time.Second)) {
		return
	}
	delays.WithLabelValues(string(o.To.SourceType)).Observe(max(now.Sub(*published), 0).Seconds())
}

// watchedSince is when an attachment began watching its source: attached,
// or its source or feed enabled again since.
func watchedSince(a Attachment) time.Time {
	since := a.AttachedAt
	for _, t := range []*time.Time{a.SourceEnabledAt, a.FeedEnabledAt} {
		if t != nil && t.After(since) {
			since = *t
		}
	}
	return since
}
