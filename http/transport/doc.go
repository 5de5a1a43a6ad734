// Package transport is the API's machinery beneath its routes: how
// connections, request bodies and answers travel, whatever the route
// answers. It holds the connection caps and the lingering close
// (connlimit.go), bounded request bodies and the 413 that keeps its
// connection (bodylimit.go), the answers to requests the server could not
// read (transport.go), request ids and the read deadline (requestid.go),
// idempotent replay of writes (idempotent.go), and the live streams of
// Server-Sent Events with their slots and shared poller (stream.go,
// streamhub.go). The handlers (package http) decide what to answer; none
// of this knows a route but through what it is handed.
package transport
