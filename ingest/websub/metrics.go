package websub

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	verifications *prometheus.CounterVec
	pushes        *prometheus.CounterVec
	requests      *prometheus.CounterVec
	ingested      *prometheus.CounterVec
	latency       prometheus.Histogram
}

func newMetrics() *metrics {
	return &metrics{
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "feedsvc_websub_verifications_total",
			Help: "Intent verifications and denials hubs sent to the callback, by mode and whether they were confirmed (answered 2xx) or refused (404)."},
			[]string{"mode", "result"}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "feedsvc_websub_pushes_received_total",
			Help: "Content distributions received, by outcome: accepted, bad_signature, inactive, unknown."}, []string{"outcome"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "feedsvc_websub_hub_requests_total",
			Help: "Subscription requests sent to hubs, by mode and outcome."}, []string{"mode", "outcome"}),
		ingested: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "feedsvc_websub_pushes_ingested_total",
			Help: "Queued pushes the crawler dealt with: ingested, unreadable, dropped."}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "feedsvc_websub_push_ingest_seconds",
			Help:    "From a push's receipt to the end of its ingestion (its entries fetched and added to feeds).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60}}),
	}
}

// Collector exposes the subscriber's counters and, read at each scrape,
// its subscriptions by state and the pushes waiting.
func (s *Subscriber) Collector() prometheus.Collector { return collector{s} }

type collector struct{ s *Subscriber }

var (
	descSubscriptions = prometheus.NewDesc("feedsvc_websub_subscriptions",
		"WebSub subscriptions by state (pending, active, denied).", []string{"state"}, nil)
	descQueued = prometheus.NewDesc("feedsvc_websub_pushes_queued",
		"Pushes received and not yet ingested.", nil, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSubscriptions
	ch <- descQueued
	m := c.s.metrics
	m.verifications.Describe(ch)
	m.pushes.Describe(ch)
	m.requests.Describe(ch)
	m.ingested.Describe(ch)
	m.latency.Describe(ch)
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	m := c.s.metrics
	m.verifications.Collect(ch)
	m.pushes.Collect(ch)
	m.requests.Collect(ch)
	m.ingested.Collect(ch)
	m.latency.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rows []struct {
		State string `bun:"state"`
		N     int    `bun:"n"`
	}
	if err := c.s.db.NewRaw(`SELECT state, count(*) AS n FROM websub_subscriptions GROUP BY state`).Scan(ctx, &rows); err != nil {
		ch <- prometheus.NewInvalidMetric(descSubscriptions, fmt.Errorf("read websub subscriptions: %w", err))
		return
	}
	counts := map[string]int{"pending": 0, "active": 0, "denied": 0}
	for _, r := range rows {
		counts[r.State] = r.N
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(descSubscriptions, prometheus.GaugeValue, float64(n), state)
	}
	var queued int
	if err := c.s.db.NewRaw(`SELECT count(*) FROM websub_pushes`).Scan(ctx, &queued); err != nil {
		ch <- prometheus.NewInvalidMetric(descQueued, fmt.Errorf("read websub pushes: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(queued))
}
