package ingest

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
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

type pollingRow struct {
	SourceID   uuid.UUID  `bun:"source_id"`
	NextAt     time.Time  `bun:"next_at"`
	LastAt     *time.Time `bun:"last_crawl_at"`
	IntervalMS *int64     `bun:"interval_ms"`
	ObservedMS *int64     `bun:"observed_interval_ms"`
	FreshMS    *int64     `bun:"freshness_ms"`
	Failures   int        `bun:"failures"`
	Reason     *string    `bun:"interval_reason"`
}

const pollingColumns = `source_id, next_at, last_crawl_at, interval_ms, observed_interval_ms, freshness_ms, failures, interval_reason`

func (r pollingRow) polling() Polling {
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
	var r pollingRow
	err := db.NewRaw(`SELECT `+pollingColumns+` FROM crawl_state c WHERE source_id = ?
		AND EXISTS (SELECT 1 FROM ingest_attachments a WHERE a.source_id = c.source_id AND a.organization_id = ?)`,
		sourceID, org).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return Polling{}, false, nil
	}
	if err != nil {
		return Polling{}, false, fmt.Errorf("read the schedule of source %s: %w", sourceID, err)
	}
	return r.polling(), true, nil
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
	var agg struct {
		Sources int     `bun:"sources"`
		Due     int     `bun:"due"`
		Lag     float64 `bun:"lag"`
	}
	err := c.db.NewRaw(`SELECT count(*) AS sources,
		count(*) FILTER (WHERE next_at <= now() AND (leased_until IS NULL OR leased_until < now())) AS due,
		coalesce(extract(epoch FROM now() - min(next_at) FILTER (WHERE next_at <= now()
			AND (leased_until IS NULL OR leased_until < now()))), 0)::float8 AS lag
		FROM crawl_state`).Scan(ctx, &agg)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descSources, fmt.Errorf("read crawl schedule: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(descSources, prometheus.GaugeValue, float64(agg.Sources))
	ch <- prometheus.MustNewConstMetric(descDue, prometheus.GaugeValue, float64(agg.Due))
	ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, agg.Lag)
	var rows []pollingRow
	if err := c.db.NewRaw(`SELECT `+pollingColumns+` FROM crawl_state`).Scan(ctx, &rows); err != nil {
		ch <- prometheus.NewInvalidMetric(descNext, fmt.Errorf("read crawl schedule: %w", err))
		return
	}
	reasons := map[string]int{}
	for _, r := range rows {
		id, p := r.SourceID.String(), r.polling()
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
