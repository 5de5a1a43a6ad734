package ingest

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedsvc/feedsvc/domain"
)

func TestAnItemsPublicationDelayCountsOnlyForDatedArticlesPublishedWhileTheSourceWasWatched(t *testing.T) {
	now := time.Now().Truncate(time.Second).Add(700 * time.Millisecond)
	attached := now.Add(-24 * time.Hour)
	reenabled := now.Add(-time.Hour)
	at := func(d time.Duration) *time.Time { p := now.Add(-d); return &p }
	offer := func(published *time.Time, enabledAt *time.Time) ArticleOffer {
		return ArticleOffer{
			To:      Attachment{SourceType: domain.SourceSitemap, AttachedAt: attached, SourceEnabledAt: enabledAt},
			Article: domain.ArticleDiscovered{Content: domain.ArticleContent{PublishedAt: published}},
		}
	}
	delays := newPublicationDelay()
	for _, o := range []ArticleOffer{
		offer(at(90*time.Second), nil),        // counted: 90 s
		offer(at(-time.Minute), nil),          // counted: dated ahead, 0 s
		offer(nil, nil),                       // undated: its date would be when it was found
		offer(at(48*time.Hour), nil),          // published before the attachment: a backfill's
		offer(at(2*time.Hour), &reenabled),    // published while the attachment was disabled
		offer(at(30*time.Minute), &reenabled), // counted: 1800 s
		// counted: 86400.7 s, dated to the second (RFC 1123) in the
		// second the attachment began watching, 0.7 s after its date
		offer(at(24*time.Hour+700*time.Millisecond), nil),
	} {
		observeAdded(delays, o, now)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(delays)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want one series", families)
	}
	m := families[0].GetMetric()[0]
	if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "source_type" || l[0].GetValue() != "sitemap" {
		t.Errorf("labels %v, want source_type sitemap", l)
	}
	h := m.GetHistogram()
	if h.GetSampleCount() != 4 || math.Abs(h.GetSampleSum()-88290.7) > 1e-6 {
		t.Errorf("%d delays summing to %v s, want 4 summing to 88290.7 s (90, 0, 1800 and 86400.7)", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := map[float64]uint64{1: 1, 60: 1, 120: 2, 1200: 2, 1800: 3}[b.GetUpperBound()]
		if want != 0 && b.GetCumulativeCount() != want {
			t.Errorf("%d delays up to %v s, want %d", b.GetCumulativeCount(), b.GetUpperBound(), want)
		}
	}
}
