package webhook

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
)

// Metrics are the webhook metrics: attempts and deliveries by outcome,
// attempt latency, and (read from the queue when scraped) how many
// deliveries wait and how long the oldest has.
type Metrics struct {
	db         bun.IDB
	attempts   *prometheus.CounterVec
	deliveries *prometheus.CounterVec
	latency    *prometheus.HistogramVec
}

func newMetrics(db bun.IDB) *Metrics {
	return &Metrics{
		db: db,
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedsvc_webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome (success, http_error, timeout, connection_error, refused_address); test deliveries are kind=test.",
		}, []string{"kind", "outcome"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedsvc_webhook_deliveries_total",
			Help: "Webhook deliveries that ended, by outcome: delivered, failed (every attempt failed), cancelled (webhook deleted or disabled), unknown (its job ended without an outcome recorded).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "feedsvc_webhook_attempt_duration_seconds",
			Help:    "Time from sending a webhook attempt to its answer or failure, by outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"outcome"}),
	}
}

func (m *Metrics) attempt(r Result, last bool) {
	m.attempts.WithLabelValues("delivery", r.Outcome).Inc()
	m.latency.WithLabelValues(r.Outcome).Observe(r.Duration.Seconds())
	switch {
	case r.OK():
		m.deliveries.WithLabelValues(StatusDelivered).Inc()
	case last:
		m.deliveries.WithLabelValues(StatusFailed).Inc()
	}
}

func (m *Metrics) probe(r Result) { m.attempts.WithLabelValues("test", r.Outcome).Inc() }

func (m *Metrics) cancelled() { m.deliveries.WithLabelValues(StatusCancelled).Inc() }

var (
	depthDesc = prometheus.NewDesc("feedsvc_webhook_queue_depth",
		"Webhook delivery runs waiting for an attempt or retry, or being attempted.", nil, nil)
	oldestDesc = prometheus.NewDesc("feedsvc_webhook_oldest_pending_age_seconds",
		"Age of the oldest delivery run not yet finished (0 when none).", nil, nil)
)

func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.attempts.Describe(ch)
	m.deliveries.Describe(ch)
	m.latency.Describe(ch)
	ch <- depthDesc
	ch <- oldestDesc
}

func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.attempts.Collect(ch)
	m.deliveries.Collect(ch)
	m.latency.Collect(ch)
	depth, oldest, err := m.queue()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(depthDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(depth))
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, oldest.Seconds())
}

// queue reads the queue's size and its oldest unfinished job's age.
func (m *Metrics) queue() (int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var depth int
	var age float64
	err := m.db.NewRaw(`SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 FROM river_job
		WHERE kind = ? AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')`,
		deliveryArgs{}.Kind()).Scan(ctx, &depth, &age)
	return depth, time.Duration(age * float64(time.Second)), err
}
