// Package metrics exposes the service's Prometheus metrics: the process's
// and HTTP requests by route; every other part brings its own collectors
// (projections, webhooks, document bounds), registered on the Registry, so
// this package imports none of them.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry holds the service's metrics.
type Registry struct {
	*prometheus.Registry
	Requests *prometheus.CounterVec
	Latency  *prometheus.HistogramVec
}

// New registers the process, Go and HTTP metrics.
func New() *Registry {
	reg := prometheus.NewRegistry()
	r := &Registry{
		Registry: reg,
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedsvc_http_requests_total", Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "feedsvc_http_request_duration_seconds", Help: "HTTP request latency by method and route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), r.Requests, r.Latency)
	return r
}
