package projections

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector reports the progress and health of the projectors the runner
// runs, for a Prometheus registry.
func (r *Runner) Collector() prometheus.Collector { return &projectionCollector{runner: r} }

var (
	processedDesc = prometheus.NewDesc("feedsvc_projection_events_read_total",
		"Events this process has read for a projector.", []string{"projector"}, nil)
	failingDesc = prometheus.NewDesc("feedsvc_projection_failing",
		"1 while a projector's last batch failed (it is retrying).", []string{"projector"}, nil)
	caughtUpDesc = prometheus.NewDesc("feedsvc_projection_caught_up_timestamp_seconds",
		"When a projector last found nothing more to read.", []string{"projector"}, nil)
)

type projectionCollector struct{ runner *Runner }

func (c *projectionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- processedDesc
	ch <- failingDesc
	ch <- caughtUpDesc
}

func (c *projectionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.runner.Projectors() {
		prog := c.runner.Progress(p.Name())
		failing := 0.0
		if prog.Err() != nil {
			failing = 1
		}
		var caughtUp float64
		if t := prog.CaughtUpAt(); !t.IsZero() {
			caughtUp = float64(t.UnixNano()) / float64(time.Second)
		}
		ch <- prometheus.MustNewConstMetric(processedDesc, prometheus.CounterValue, float64(prog.Processed()), p.Name())
		ch <- prometheus.MustNewConstMetric(failingDesc, prometheus.GaugeValue, failing, p.Name())
		ch <- prometheus.MustNewConstMetric(caughtUpDesc, prometheus.GaugeValue, caughtUp, p.Name())
	}
}

// Collector reports the rebuilds of read models this process runs (on
// start, for projectors newer than their read model), for a Prometheus
// registry.
func (r *Rebuilder) Collector() prometheus.Collector { return &rebuildCollector{rebuilder: r} }

var (
	rebuildPhaseDesc = prometheus.NewDesc("feedsvc_projection_rebuild_phase",
		"1 for the phase a projector's rebuild is in, as this process sees it (outdated, waiting for another process, rebuilding, swapping, done, done by another process, failed).",
		[]string{"projector", "phase"}, nil)
	rebuildEventsDesc = prometheus.NewDesc("feedsvc_projection_rebuild_events_read",
		"Events the projector's current or last rebuild in this process has read.", []string{"projector"}, nil)
	rebuildTotalDesc = prometheus.NewDesc("feedsvc_projection_rebuild_events_total",
		"Events in the log when the projector's current or last rebuild started (0 until counted).", []string{"projector"}, nil)
	rebuildVersionDesc = prometheus.NewDesc("feedsvc_projection_rebuild_version",
		"The version of the read model the projector's current or last rebuild builds.", []string{"projector"}, nil)
)

type rebuildCollector struct{ rebuilder *Rebuilder }

func (c *rebuildCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- rebuildPhaseDesc
	ch <- rebuildEventsDesc
	ch <- rebuildTotalDesc
	ch <- rebuildVersionDesc
}

func (c *rebuildCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.rebuilder.States() {
		if s.Phase == "" {
			continue
		}
		ch <- prometheus.MustNewConstMetric(rebuildPhaseDesc, prometheus.GaugeValue, 1, s.Projector, s.Phase)
		ch <- prometheus.MustNewConstMetric(rebuildEventsDesc, prometheus.GaugeValue, float64(s.Events), s.Projector)
		ch <- prometheus.MustNewConstMetric(rebuildTotalDesc, prometheus.GaugeValue, float64(s.Total), s.Projector)
		ch <- prometheus.MustNewConstMetric(rebuildVersionDesc, prometheus.GaugeValue, float64(s.Version), s.Projector)
	}
}
