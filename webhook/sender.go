package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/feedsvc/feedsvc/internal/safehttp"
)

// SenderOptions configure a Sender.
type SenderOptions struct {
	AllowPrivateNetworks bool
	Timeout              time.Duration
	PerHost              int
	// Control replaces the address check (tests).
	Control func(network, address string, c syscall.RawConn) error
}

// Sender posts signed deliveries. Every dial is checked against the
// network rule of D10 by safehttp (so a name that resolves, or later
// re-resolves, to a private address is refused), redirects are not
// followed, and each attempt is bounded by the timeout.
type Sender struct {
	client  *http.Client
	timeout time.Duration
	hosts   *hostSlots
}

// NewSender returns a sender.
func NewSender(o SenderOptions) *Sender {
	if o.Timeout <= 0 {
		o.Timeout = DefaultAttemptTimeout
	}
	if o.PerHost <= 0 {
		o.PerHost = DefaultPerHost
	}
	client := safehttp.New(safehttp.Options{
		AllowPrivateNetworks: o.AllowPrivateNetworks, Timeout: o.Timeout, MaxRedirects: -1,
		MaxIdleConnsPerHost: o.PerHost, Control: o.Control,
	})
	return &Sender{client: client, timeout: o.Timeout, hosts: newHostSlots(o.PerHost)}
}

// Request is one attempt to deliver.
type Request struct {
	URL       string
	WebhookID string
	EventID   string
	Body      []byte
	// Secrets sign the attempt, the current one first.
	Secrets []string
	At      time.Time
}

// Outcomes of an attempt, the metrics' labels.
const (
	OutcomeSuccess    = "success"
	OutcomeHTTPError  = "http_error"
	OutcomeTimeout    = "timeout"
	OutcomeConnection = "connection_error"
	OutcomeRefused    = "refused_address"
)

// Result is what one attempt got.
type Result struct {
	Outcome    string
	StatusCode int
	// Error says what went wrong, for the delivery log; empty on success.
	Error    string
	Duration time.Duration
}

// OK reports an acknowledgement: any 2xx (D10).
func (r Result) OK() bool { return r.Outcome == OutcomeSuccess }

// responseDrain is how much of an answer is read so the connection can be
// reused; receivers are asked to answer with nothing much.
const responseDrain = 64 << 10

// Send makes one attempt.
func (s *Sender) Send(ctx context.Context, r Request) Result {
	ts := r.At.Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return Result{Outcome: OutcomeConnection, Error: "the endpoint is not a valid URL"}
	}
	if err := safehttp.CheckURL(req.URL); err != nil {
		return Result{Outcome: OutcomeConnection, Error: "the endpoint is not an http or https URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "feedsvc-webhooks/1")
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, SignatureHeader(r.Secrets, ts, r.Body))
	req.Header.Set(HeaderWebhookID, r.WebhookID)
	req.Header.Set(HeaderEventID, r.EventID)
	req.Header.Set(HeaderStandardID, r.EventID)
	req.Header.Set(HeaderStandardTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderStandardSignature, StandardSignatureHeader(r.Secrets, r.EventID, ts, r.Body))
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		res := s.failure(err)
		res.Duration = time.Since(start)
		return res
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, responseDrain))
	_ = resp.Body.Close()
	res := Result{StatusCode: resp.StatusCode, Duration: time.Since(start)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		res.Outcome = OutcomeSuccess
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.Outcome, res.Error = OutcomeHTTPError, fmt.Sprintf("answered HTTP %d; redirects are not followed", resp.StatusCode)
	default:
		res.Outcome, res.Error = OutcomeHTTPError, fmt.Sprintf("answered HTTP %d", resp.StatusCode)
	}
	return res
}

// failure describes a request that got no answer, without the URL (the
// log shows it beside) and without anything the receiver sent.
func (s *Sender) failure(err error) Result {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case safehttp.Refused(err):
		return Result{Outcome: OutcomeRefused, Error: "the endpoint resolves to a non-public address, which is refused"}
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return Result{Outcome: OutcomeTimeout, Error: fmt.Sprintf("no answer within %s", s.timeout)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return Result{Outcome: OutcomeConnection, Error: "connection refused"}
	}
	return Result{Outcome: OutcomeConnection, Error: "connection failed: " + err.Error()}
}

// hostSlots bounds the attempts in flight per receiver host.
type hostSlots struct {
	per   int
	mu    sync.Mutex
	slots map[string]chan struct{}
}

func newHostSlots(per int) *hostSlots {
	return &hostSlots{per: per, slots: map[string]chan struct{}{}}
}

// acquire takes a slot for the host of rawURL, waiting at most wait; the
// release func gives it back.
func (h *hostSlots) acquire(ctx context.Context, rawURL string, wait time.Duration) (func(), bool) {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		host = u.Host
	}
	h.mu.Lock()
	ch, ok := h.slots[host]
	if !ok {
		ch = make(chan struct{}, h.per)
		h.slots[host] = ch
	}
	h.mu.Unlock()
	release := func() { <-ch }
	select {
	case ch <- struct{}{}:
		return release, true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ch <- struct{}{}:
		return release, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}
