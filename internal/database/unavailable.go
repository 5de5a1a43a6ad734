package database

import (
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says the database could not be reached
// or refused to serve for now: a connection refused or failed, too many
// clients (53300) or another lack of resources (class 53), a server
// starting up or shutting down (57P01-57P03), a lost connection (class
// 08). These pass; the request was not at fault and may be repeated, so
// the API answers them 503 with Retry-After rather than 500.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch {
	case strings.HasPrefix(pgErr.Code, "08"), // connection_exception
		strings.HasPrefix(pgErr.Code, "53"),                                 // insufficient_resources: too_many_connections, out_of_memory, disk_full
		pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
		return true
	}
	return false
}
