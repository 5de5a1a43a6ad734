package ingest

import (
	"cmp"
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/ingest/crawlstate"
)

// Polling is what the crawler knows of a source's schedule, for the
// source's detail and the metrics.
type Polling struct {
	// NextPollAt is when the source is due next.
	NextPollAt time.Time
	// LastPollAt is when a poll of it last ended; nil before the first.
	LastPollAt *time.Time
	// Interval is what the last poll chose as the wait for the next
	// (before jitter): the source's interval after a success, the backoff
	// or the site's Retry-After after a failure; zero before the first.
	Interval time.Duration
	// ObservedInterval is the mean gap between the source's recent
	// articles (schedule.go); zero when it published none in the last
	// week (or the interval is fixed).
	ObservedInterval time.Duration
	// Freshness is the shortest freshness its listings claimed; zero when
	// none did.
	Freshness time.Duration
	// Failures is how many polls in a row failed.
	Failures int
	// Reason is why the next poll is when it is (schedule.go: interval,
	// busy, quiet, push, backlog, backoff, or the site's own request:
	// cacheControl, expires, feedTtl, feedUpdatePeriod, retryAfter,
	// crawlDelay); empty before the first poll.
	Reason string
}

// polling is a source's row of crawl_state as Polling.
func polling(r crawlstate.Polling) Polling {
	ms := func(p *int64) time.Duration {
		if p == nil {
			return 0
		}
		return time.Duration(*p) * time.Millisecond
	}
	p := Polling{NextPollAt: r.NextAt, LastPollAt: r.LastAt, Interval: ms(r.IntervalMS),
		ObservedInterval: ms(r.ObservedMS), Freshness: ms(r.FreshMS), Failures: r.Failures}
	if r.Reason != nil {
		p.Reason = *r.Reason
	}
	return p
}

// PollingOf reads a source's schedule as the organization org may see it:
// false when the crawler has not scheduled it yet (it is polled as soon as
// a crawler is free: new sources go first), and when none of org's feeds
// has it attached. A source record is shared between organizations, and
// its schedule must not tell one that another polls it.
func PollingOf(ctx context.Context, db bun.IDB, org, sourceID uuid.UUID) (Polling, bool, error) {
	r, ok, err := crawlstate.PollingOf(ctx, db, org, sourceID)
	if err != nil || !ok {
		return Polling{}, ok, err
	}
	return polling(r), true, nil
}

// PollingCollector exposes every scheduled source's schedule (next poll,
// chosen and observed interval) and how late the due ones are, read from
// crawl_state at each scrape. It is one series per source and gauge, so a
// deployment with very many sources may prefer the aggregates
// (feedsvc_crawl_*), which come first.
func PollingCollector(db bun.IDB) prometheus.Collector {
	return &pollingCollector{db: db}
}

type pollingCollector struct{ db bun.IDB }

var (
	descNext = prometheus.NewDesc("feedsvc_source_next_poll_timestamp_seconds",
		"When the source is due to be polled next (Unix time).", []string{"source_id"}, nil)
	descInterval = prometheus.NewDesc("feedsvc_source_poll_interval_seconds",
		"The wait the source's last poll chose before its next (before jitter).", []string{"source_id"}, nil)
	descObserved = prometheus.NewDesc("feedsvc_source_observed_interval_seconds",
		"The mean gap between the source's recent articles (absent when it published none in the last week).", []string{"source_id"}, nil)
	descReasons = prometheus.NewDesc("feedsvc_crawl_sources_by_interval_reason",
		"Scheduled sources by why their next poll is when it is (the polling block's intervalReason; none before the first poll).",
		[]string{"reason"}, nil)
	descSources = prometheus.NewDesc("feedsvc_crawl_sources",
		"Sources the crawler has scheduled.", nil, nil)
	descDue = prometheus.NewDesc("feedsvc_crawl_due_sources",
		"Scheduled sources whose next poll is due and not running.", nil, nil)
	descLag = prometheus.NewDesc("feedsvc_crawl_oldest_due_seconds",
		"How long the most overdue source has been due (0 when none is).", nil, nil)
)

func (c *pollingCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNext, descInterval, descObserved, descReasons, descSources, descDue, descLag} {
		ch <- d
	}
}

func (c *pollingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	agg, err := crawlstate.ScheduleBacklog(ctx, c.db)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descSources, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(descSources, prometheus.GaugeValue, float64(agg.Sources))
	ch <- prometheus.MustNewConstMetric(descDue, prometheus.GaugeValue, float64(agg.Due))
	ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, agg.Lag)
	rows, err := crawlstate.Pollings(ctx, c.db)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descNext, err)
		return
	}
	reasons := map[string]int{}
	for _, r := range rows {
		id, p := r.SourceID.String(), polling(r)
		reasons[cmp.Or(p.Reason, "none")]++
		ch <- prometheus.MustNewConstMetric(descNext, prometheus.GaugeValue, float64(p.NextPollAt.UnixMilli())/1000, id)
		if p.Interval > 0 {
			ch <- prometheus.MustNewConstMetric(descInterval, prometheus.GaugeValue, p.Interval.Seconds(), id)
		}
		if p.ObservedInterval > 0 {
			ch <- prometheus.MustNewConstMetric(descObserved, prometheus.GaugeValue, p.ObservedInterval.Seconds(), id)
		}
	}
	for reason, n := range reasons {
		ch <- prometheus.MustNewConstMetric(descReasons, prometheus.GaugeValue, float64(n), reason)
	}
}
