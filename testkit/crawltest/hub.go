// Package crawltest holds local stand-ins for the outside world the
// crawler reads, for end-to-end tests of the whole service (in process or
// a `feedsvc serve` process): a WebSub hub that follows the W3C
// recommendation, a news site whose feed names it, and a site whose feed
// says how fresh it stays. They are plain httptest servers on loopback,
// so the service under test runs with private networks allowed.
package crawltest

import (
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
)

// Hub is a WebSub hub shaped like the W3C recommendation's (sections 5 to
// 8): a subscription request is a form POST answered 202 Accepted, after
// which the hub verifies the subscriber's intent asynchronously with a GET
// to the callback carrying hub.mode, hub.topic, hub.challenge and (to
// subscribe) hub.lease_seconds, and counts the request verified only when
// the callback answers 2xx with the challenge as its body. Content is
// distributed as a POST of the topic's body to each verified, unexpired
// callback, with Link headers and, when the subscriber gave a secret, an
// X-Hub-Signature of sha256 HMAC.
type Hub struct {
	*httptest.Server
	t testing.TB
	// lease is the lease it grants, whatever is asked.
	lease time.Duration

	// client calls the service's callback, holding every exchange to the
	// OpenAPI document (openapitest): what the callback answers a hub is
	// the service's answer like any other.
	client *http.Client

	mu       sync.Mutex
	requests []HubRequest
	subs     map[string]*hubSub // by callback
	verified []Verification
	// disagreements are the client's reports, told to the test when it
	// ends: verifications run on goroutines of their own.
	disagreements []string
	ended         bool
}

// HubRequest is a subscription request as the hub received it.
type HubRequest struct {
	Mode, Topic, Callback, Secret, LeaseSeconds string
	At                                          time.Time
}

// Verification is the outcome of one intent verification the hub sent.
type Verification struct {
	Mode, Callback string
	Status         int
	Echoed         bool
	// At is when the hub sent it.
	At time.Time
}

type hubSub struct {
	topic, callback, secret string
	expires                 time.Time
}

// NewHub starts a hub granting lease to every subscription, until the
// test ends.
func NewHub(t testing.TB, lease time.Duration) *Hub {
	h := &Hub{t: t, lease: lease, subs: map[string]*hubSub{}}
	// The document is read once per test binary: here, rather than in the
	// middle of the first verification.
	if _, err := openapitest.Default(); err != nil {
		t.Fatalf("load the OpenAPI document: %v", err)
	}
	h.client = &http.Client{Transport: &openapitest.Transport{Base: http.DefaultTransport, Report: h.disagree}}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(func() {
		h.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		h.ended = true
		for _, d := range h.disagreements {
			t.Errorf("the hub's exchange with the callback: %s", d)
		}
	})
	return h
}

// disagree keeps what the client found amiss until the test ends; what a
// verification still running then finds is dropped with it.
func (h *Hub) disagree(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ended {
		h.disagreements = append(h.disagreements, fmt.Sprintf(format, args...))
	}
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		http.Error(w, "want a form POST", http.StatusBadRequest)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	req := HubRequest{Mode: r.PostForm.Get("hub.mode"), Topic: r.PostForm.Get("hub.topic"), Callback: r.PostForm.Get("hub.callback"),
		Secret: r.PostForm.Get("hub.secret"), LeaseSeconds: r.PostForm.Get("hub.lease_seconds"), At: time.Now()}
	if (req.Mode != "subscribe" && req.Mode != "unsubscribe") || req.Topic == "" || req.Callback == "" || len(req.Secret) >= 200 {
		http.Error(w, "bad subscription request", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.requests = append(h.requests, req)
	h.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	// Verification of intent follows the 202, asynchronously.
	go h.verify(req)
}

// verify sends the intent verification of a request.
func (h *Hub) verify(req HubRequest) {
	// Timed from the sending: the callback answers at once, and checking
	// the exchange against the document takes the client a moment more.
	sent := time.Now()
	ok, status := h.SendVerification(req.Callback, req.Mode, req.Topic)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.verified = append(h.verified, Verification{Mode: req.Mode, Callback: req.Callback, Status: status, Echoed: ok, At: sent})
	if !ok {
		return
	}
	switch req.Mode {
	case "subscribe":
		h.subs[req.Callback] = &hubSub{topic: req.Topic, callback: req.Callback, secret: req.Secret, expires: sent.Add(h.lease)}
	case "unsubscribe":
		delete(h.subs, req.Callback)
	}
}

// SendVerification is the hub's GET to a callback; ok when it answered
// 2xx with the challenge.
func (h *Hub) SendVerification(callback, mode, topic string) (ok bool, status int) {
	challenge := randomHex(16)
	q := url.Values{"hub.mode": {mode}, "hub.topic": {topic}, "hub.challenge": {challenge}}
	if mode == "subscribe" {
		q.Set("hub.lease_seconds", strconv.Itoa(int(h.lease/time.Second)))
	}
	resp, err := h.client.Get(callback + "?" + q.Encode())
	if err != nil {
		return false, 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode/100 == 2 && string(body) == challenge, resp.StatusCode
}

// Deny sends a denial for the subscription of callback.
func (h *Hub) Deny(callback, topic string) int {
	q := url.Values{"hub.mode": {"denied"}, "hub.topic": {topic}, "hub.reason": {"not today"}}
	resp, err := h.client.Get(callback + "?" + q.Encode())
	if err != nil {
		h.t.Fatalf("deny: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Publish distributes body to every verified, unexpired subscriber of
// topic, signed with their secret, and returns their answers' statuses.
func (h *Hub) Publish(topic, body string) []int {
	return h.PublishSigned(topic, body, func(secret string) string { return "sha256=" + Sign(secret, body) })
}

// PublishSigned is Publish with the X-Hub-Signature value made by sig
// from each subscriber's secret ("" sends none).
func (h *Hub) PublishSigned(topic, body string, sig func(secret string) string) []int {
	h.mu.Lock()
	var targets []hubSub
	for _, s := range h.subs {
		if s.topic == topic && time.Now().Before(s.expires) {
			targets = append(targets, *s)
		}
	}
	h.mu.Unlock()
	var statuses []int
	for _, s := range targets {
		req, _ := http.NewRequest(http.MethodPost, s.callback, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/atom+xml")
		req.Header.Add("Link", fmt.Sprintf(`<%s>; rel="hub"`, h.URL))
		req.Header.Add("Link", fmt.Sprintf(`<%s>; rel="self"`, topic))
		if v := sig(s.secret); v != "" {
			req.Header.Set("X-Hub-Signature", v)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			h.t.Errorf("publish to %s: %v", s.callback, err)
			continue
		}
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	return statuses
}

// PublishTo pushes body to one callback, signed with secret, whether or
// not the hub still counts it subscribed.
func (h *Hub) PublishTo(callback, body, secret string) int {
	req, _ := http.NewRequest(http.MethodPost, callback, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/atom+xml")
	req.Header.Set("X-Hub-Signature", "sha256="+Sign(secret, body))
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("push to %s: %v", callback, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Requests are the subscription requests of mode the hub received, in
// order.
func (h *Hub) Requests(mode string) []HubRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []HubRequest
	for _, r := range h.requests {
		if r.Mode == mode {
			out = append(out, r)
		}
	}
	return out
}

// Verifications are the intent verifications of mode the hub sent, in
// order.
func (h *Hub) Verifications(mode string) []Verification {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Verification
	for _, v := range h.verified {
		if v.Mode == mode {
			out = append(out, v)
		}
	}
	return out
}

// Subscribers is how many verified subscriptions the hub holds, expired
// or not.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Sign is the hex sha256 HMAC of body with secret, as X-Hub-Signature
// carries it after "sha256=".
func Sign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}
