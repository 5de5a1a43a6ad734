package http

import (
	"strconv"
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
		// Labels outlive the request, and take no value from it: the
		// method is one of the app's, the route a pattern of the app's.
		method := methodLabel(c.Method())
		route := c.Route().Path
		if status == fiber.StatusNotFound && route == "/" {
			route = "unmatched"
		}
		reg.Requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
		reg.Latency.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		return err
	}
}

// methodLabel is the app's own spelling of a method it routes (the
// transport answers the others before any route runs), "other" else.
func methodLabel(method string) string {
	for _, m := range fiber.DefaultMethods {
		if m == method {
			return m
		}
	}
	return "other"
}

func metricsHandler(reg *metrics.Registry) fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
}
