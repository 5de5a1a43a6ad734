// Package platformtest has local fakes of the platforms' APIs for tests:
// each answers the paths, parameters, paging, errors and rate-limit
// headers its platform documents, from accounts the test gives it, and
// records the requests it got.
package platformtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Request is a request a fake got.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   string
	At     time.Time
}

// log records requests and, when asked, answers the next ones with 429.
type log struct {
	mu       sync.Mutex
	requests []Request
	limited  int
	reset    time.Time
}

func (l *log) record(r Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r)
}

// Requests are the requests the fake got, in order.
func (l *log) Requests() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.requests...)
}

// RequestsTo are the requests whose path is path.
func (l *log) RequestsTo(path string) []Request {
	var out []Request
	for _, r := range l.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// RateLimit makes the next n requests answer 429, saying the limit resets
// at reset.
func (l *log) RateLimit(n int, reset time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.limited, l.reset = n, reset
}

// limit reports whether this request is to be answered 429, and the reset.
func (l *log) limit() (bool, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limited == 0 {
		return false, time.Time{}
	}
	l.limited--
	return true, l.reset
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
