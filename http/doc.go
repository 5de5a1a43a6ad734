// Package http is the service's JSON API over Fiber: the routes of both
// feed kinds and both response generations (current and /v0), request
// decoding and its bounds, the feed outputs and live item streams, and
// the OpenAPI document and reference it serves. Its subpackages are the
// error envelope (envelope), key authentication and rate limiting as
// middleware (keyauth), the machinery beneath the routes (transport:
// connection caps, body bounds, request ids, idempotent replay, the
// streams' slots and poller), the OpenAPI document (openapi) and the
// generated clients (clients, a Go module of its own). Handlers call
// commands to write and read models to read, through the queries the
// wiring hands in (Deps.Reads, reads.go): http holds no database handle
// and names no table (internal/layers checks it). Nothing below imports it.
package http
