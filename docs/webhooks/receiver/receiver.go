// Package receiver is a webhook receiver for feedsvc's event.item_added,
// using only the standard library: it verifies each delivery's signature,
// refuses stale deliveries, answers at once and processes each event once,
// in the background. docs/webhooks.md shows this file; its tests send it
// deliveries with the service's own sender.
package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tolerance is how far a delivery's timestamp may be from the receiver's
// clock. A captured delivery replayed later than this is refused.
const Tolerance = 5 * time.Minute

var (
	ErrStale     = errors.New("timestamp missing or outside the tolerance")
	ErrSignature = errors.New("no signature matches")
)

// Verify checks a delivery: its x-service-timestamp must be within
// Tolerance of now, and one of the space-separated signatures in
// x-service-signature must be the lowercase hex HMAC-SHA256, keyed with the
// secret, of "<x-service-timestamp>.<raw body>". There are two signatures
// for 24 hours after a secret rotation, so either secret verifies.
func Verify(secret, signatureHeader, timestampHeader string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestampHeader, 10, 64)
	if err != nil {
		return ErrStale
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return ErrStale
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestampHeader + "."))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(signatureHeader) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}

// Delivery is what a handler gets: the event id and the body's members.
type Delivery struct {
	EventID   string          `json:"-"`
	Event     string          `json:"event"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Receiver is an http.Handler for webhook deliveries.
type Receiver struct {
	Secret string
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu   sync.Mutex
	seen map[string]bool
	work chan Delivery
}

// New returns a receiver that hands each new event to handle, one at a
// time, in the background.
func New(secret string, handle func(Delivery)) *Receiver {
	r := &Receiver{Secret: secret, seen: map[string]bool{}, work: make(chan Delivery, 1024)}
	go func() {
		for d := range r.work {
			handle(d)
		}
	}()
	return r
}

// ServeHTTP answers 401 to a delivery it cannot trust, 2xx to one it has
// taken (or already had), and 503 when it cannot take more right now: the
// service then retries later.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 1<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	if err := Verify(r.Secret, req.Header.Get("x-service-signature"), req.Header.Get("x-service-timestamp"), body, now()); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var d Delivery
	if err := json.Unmarshal(body, &d); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	d.EventID = req.Header.Get("x-service-event-id")
	// Retries and redeliveries carry the same event id: take each once.
	// A real receiver records the id where it stores the event's effect,
	// in the same transaction (a unique key), not in memory.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[d.EventID] {
		w.WriteHeader(http.StatusOK)
		return
	}
	select {
	case r.work <- d:
		r.seen[d.EventID] = true
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}
}
