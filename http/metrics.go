package http

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/feedsvc/feedsvc/internal/metrics"
)

// observe records every request by its route pattern (not its path, so
// feed ids do not explode the label space).
func observe(reg *metrics.Registry) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		status := statusOf(c, err)
		// Fiber's strings alias buffers reused by the next request; labels
		// outlive this one.
		method := strings.Clone(c.Method())
		route := strings.Clone(c.Route().Path)
		if status == fiber.StatusNotFound && route == "/" {
			route = "unmatched"
		}
		reg.Requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
		reg.Latency.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		return err
	}
}

func metricsHandler(reg *metrics.Registry) fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
}
