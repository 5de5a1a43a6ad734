package database

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says the database could not be reached
// or refused to serve for now: a connection refused or failed, too many
// clients (53300) or another lack of resources (class 53), a server
// starting up or shutting down (57P01-57P03), a lost connection (class
// 08), or a connection cut under the statement (connectionLost). These
// pass; the request was not at fault and may be repeated, so the API
// answers them 503 with Retry-After rather than 500.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) || errors.Is(err, driver.ErrBadConn) || connectionLost(err) {
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

// connectionLost reports whether err is a connection cut under a
// statement: the server or the network reset it, or closed it, before
// the answer came. pgx passes these on as the network said them (issue
// 34.4: "broken pipe" answered 500): a write that fails (EPIPE,
// ECONNRESET), a read that ends early (io.ErrUnexpectedEOF, pgx's reading
// of an end of stream mid-message), a connection gone (ECONNABORTED,
// ETIMEDOUT, an unreachable network), or one pgx had already closed
// (pgconn.ErrConnClosed, net.ErrClosed). pgconn.SafeToRetry is not asked:
// it also says yes to a context already done (answered on its own) and to
// a connection used twice at once (a fault, which stays a 500).
func connectionLost(err error) bool {
	for _, lost := range []error{syscall.EPIPE, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.ETIMEDOUT,
		syscall.ENETUNREACH, syscall.EHOSTUNREACH, io.ErrUnexpectedEOF, net.ErrClosed, pgconn.ErrConnClosed} {
		if errors.Is(err, lost) {
			return true
		}
	}
	return false
}
