package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	dto "github.com/prometheus/client_model/go"

	"github.com/feedsvc/feedsvc/internal/logctx"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Issue 34.1: the strings and byte slices Fiber hands a handler point
// into buffers the next request on the same context reuses. A value kept
// past its request (a metric label, a map key, a log record read later)
// is silently rewritten by whatever request comes next: `/metrics`
// answered 500 after ten requests that need no key, its websub label
// reading "subscribebe". These tests send requests that need no key, and
// mixed requests at once with garbage in them, then read back what the
// service kept.

// keptRecords keeps every log record as it was logged, the way an
// asynchronous or batching log pipeline holds records past the moment
// they were written: a string a record took from a request is read after
// the request's answer.
type keptRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (k *keptRecords) Enabled(context.Context, slog.Level) bool { return true }
func (k *keptRecords) Handle(_ context.Context, r slog.Record) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.records = append(k.records, r.Clone())
	return nil
}
func (k *keptRecords) WithAttrs([]slog.Attr) slog.Handler { return k }
func (k *keptRecords) WithGroup(string) slog.Handler      { return k }

// requestLines are the attributes of the kept "request" lines (one per
// request, written once its handler returned) by request id.
func (k *keptRecords) requestLines() map[string][]map[string]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string][]map[string]string{}
	for _, r := range k.records {
		if r.Message != "request" {
			continue
		}
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		out[attrs["request_id"]] = append(out[attrs["request_id"]], attrs)
	}
	return out
}

// fixedLabels are the values each label of the API's and the WebSub
// callback's metrics may take: lists fixed in the code, never a value
// from a request.
func fixedLabels(h *servicetest.Harness) map[string]map[string][]string {
	routes := []string{"unmatched"}
	// Middleware's own pattern ("/") names answers given before a route
	// ran (a 405, a refused body).
	for _, r := range h.Service.App.GetRoutes(false) {
		routes = append(routes, r.Path)
	}
	methods := append(slices.Clone(fiber.DefaultMethods), "other")
	var statuses []string
	for s := 100; s < 600; s++ {
		statuses = append(statuses, strconv.Itoa(s))
	}
	return map[string]map[string][]string{
		"feedsvc_http_requests_total":           {"method": methods, "route": routes, "status": statuses},
		"feedsvc_http_request_duration_seconds": {"method": methods, "route": routes},
		"feedsvc_websub_verifications_total": {"mode": {"subscribe", "unsubscribe", "denied", "other"},
			"result": {"confirmed", "refused"}},
		"feedsvc_websub_pushes_received_total": {"outcome": {"accepted", "bad_signature", "inactive", "unknown"}},
	}
}

// wantMetricsIntact reads the metrics back from the registry and through
// GET /metrics: both must work, and every label of the API's and the
// callback's metrics must be one of its fixed values. It returns the
// families by name.
func wantMetricsIntact(t *testing.T, h *servicetest.Harness, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics answered %d: %.500s", resp.StatusCode, body)
	}
	families, err := h.Service.Metrics.Gather()
	if err != nil {
		t.Fatalf("the registry cannot be read: %v", err)
	}
	fixed := fixedLabels(h)
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
		allowed, ok := fixed[f.GetName()]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(allowed[l.GetName()], l.GetValue()) {
					t.Errorf("%s has %s=%q, not one of its fixed values", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
	return byName
}

// counted sums the counters of family whose labels include want.
func counted(families map[string]*dto.MetricFamily, family string, want map[string]string) int {
	n := 0.0
	f := families[family]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		n += m.GetCounter().GetValue()
	}
	return int(n)
}

// status sends a request with headers on client and returns its status;
// the body is read, so the connection is kept for the next request.
func status(t *testing.T, client *http.Client, method, target string, body string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, target, err)
		return 0, nil, ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(raw)
}

// garbage is a string of n random bytes, percent-encoded for a URL.
func garbage(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return url.QueryEscape(string(b))
}

// callbackID is an id of the WebSub callback's form (43 characters of
// base64url) that no subscription has.
func callbackID(rng *rand.Rand) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := make([]byte, 43)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// keylessRequest is one request that needs no key, of any route, with garbage
// in its path, query and headers.
func keylessRequest(rng *rand.Rand) (method, path string, headers map[string]string) {
	headers = map[string]string{}
	if rng.IntN(2) == 0 {
		headers["X-Request-Id"] = "r-" + strconv.Itoa(rng.IntN(1_000_000))
	}
	if rng.IntN(3) == 0 {
		headers["Last-Event-ID"] = garbage(rng, 1+rng.IntN(60))
	}
	if rng.IntN(3) == 0 {
		headers["Idempotency-Key"] = "k" + strconv.Itoa(rng.IntN(1000))
	}
	modes := []string{"subscribe", "unsubscribe", "denied", "subscribebe", "", garbage(rng, 1+rng.IntN(40))}
	switch rng.IntN(8) {
	case 0, 1, 2:
		id := callbackID(rng)
		if rng.IntN(2) == 0 {
			id = garbage(rng, 1+rng.IntN(50))
		}
		q := url.Values{"hub.mode": {modes[rng.IntN(len(modes))]}, "hub.topic": {garbage(rng, rng.IntN(30))},
			"hub.challenge": {garbage(rng, rng.IntN(30))}, "hub.lease_seconds": {strconv.Itoa(rng.IntN(100000) - 10)}}
		return "GET", "/websub/" + id + "?" + q.Encode(), headers
	case 3:
		return "POST", "/websub/" + callbackID(rng), headers
	case 4:
		return "GET", "/feeds/news/" + garbage(rng, 1+rng.IntN(40)) + "/items?cursor=" + garbage(rng, 30), headers
	case 5:
		return []string{"GET", "POST", "DELETE", "PATCH", "OPTIONS"}[rng.IntN(5)], "/" + garbage(rng, 1+rng.IntN(80)), headers
	case 6:
		return "GET", "/healthz?" + garbage(rng, 20) + "=" + garbage(rng, 20), headers
	}
	return "GET", "/feeds/events/" + garbage(rng, 10) + "/items/stream?lastEventId=" + garbage(rng, 40), headers
}

func TestMetricsAnswerAfterAnySequenceOfRequestsThatNeedNoKey(t *testing.T) {
	h := servicetest.Start(t)
	base := "http://" + h.Listen()
	// One client, one kept-alive connection: each request reuses the
	// buffers of the one before, as ordinary traffic does.
	client := &http.Client{Timeout: 30 * time.Second}
	t.Run("the issue's sequence", func(t *testing.T) {
		for range 5 {
			status(t, client, "GET", base+"/websub/x?hub.mode=subscribe", "", nil)
		}
		for range 5 {
			status(t, client, "GET", base+"/websub/y?hub.mode=%ff%fe%fd%fc%fb%fa%f9%f8%f7", "", nil)
		}
		families := wantMetricsIntact(t, h, base)
		verified := "feedsvc_websub_verifications_total"
		if n := counted(families, verified, map[string]string{"mode": "subscribe", "result": "refused"}); n != 5 {
			t.Errorf("%d refused subscribe verifications counted; want 5", n)
		}
		if n := counted(families, verified, map[string]string{"mode": "other", "result": "refused"}); n != 5 {
			t.Errorf("%d refused verifications of other modes counted; want 5", n)
		}
	})
	t.Run("random sequences, one after another and at once", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(34, 1))
		for round := range 6 {
			var wg sync.WaitGroup
			for w := range 1 + round%3 {
				seed := rng.Uint64()
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(seed, uint64(w)))
					client := &http.Client{Timeout: 30 * time.Second}
					for range 40 {
						method, path, headers := keylessRequest(rng)
						status(t, client, method, base+path, "", headers)
					}
				})
			}
			wg.Wait()
			wantMetricsIntact(t, h, base)
			if t.Failed() {
				t.Fatalf("after round %d", round)
			}
		}
	})
}

// A request's own values, as the test sent them and the service must
// have kept them.
type sentRequest struct {
	method, path string
}

func TestValuesKeptPastTheirRequestAreNeverRewrittenByLaterRequests(t *testing.T) {
	kept := &keptRecords{}
	h := servicetest.StartLogged(t, logctx.New(kept), fastStreams)
	feed := h.Do("POST", "/feeds/news", map[string]string{"name": "kept", "description": "d"}).MustStatus(t, 201).Data()
	feedID := feed["id"].(string)
	att := h.Do("POST", "/feeds/news/"+feedID+"/sources", map[string]string{"sourceType": "site", "domain": "news.example"}).MustStatus(t, 201).Data()
	f := &itemFixture{h: h, feedID: feedID}
	for i := range 5 {
		f.add(t, att, full(i))
	}
	addr := h.Listen()
	base := "http://" + addr
	stream := "/feeds/news/" + feedID + "/items/stream"
	first := openStream(t, addr, stream+"?lastEventId=", h.Key, nil)
	var eventIDs []string
	for range 5 {
		eventIDs = append(eventIDs, first.next(10*time.Second).ID)
	}
	first.close()

	const workers, perWorker = 8, 60
	var (
		mu       sync.Mutex
		sent     = map[string]sentRequest{} // by request id
		modes    = map[string]int{}         // refused verifications by the label they must count under
		callback int                        // requests to the callback
		replays  = map[string][2]string{}   // Idempotency-Key: body, created feed id
	)
	// A stream resumed from the second event, opened while the garbage
	// flows, must send the third to the fifth and then a new one, and
	// nothing else: its cursor is kept for the stream's life.
	resumed := openStream(t, addr, stream, h.Key, map[string]string{"Last-Event-ID": eventIDs[1]})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 34))
			client := &http.Client{Timeout: 30 * time.Second}
			for i := range perWorker {
				rid := fmt.Sprintf("w%d-%d-%s", w, i, strings.Repeat("x", rng.IntN(60)))
				headers := map[string]string{"X-Request-Id": rid, "Authorization": "Bearer " + h.Key}
				var method, path, query, body string
				switch i % 4 {
				case 0:
					mode := []string{"subscribe", "unsubscribe", "denied", garbage(rng, 1+rng.IntN(30))}[rng.IntN(4)]
					method, path = "GET", "/websub/"+callbackID(rng)
					query = "?hub.mode=" + url.QueryEscape(mode)
					if strings.HasPrefix(mode, "%") || !slices.Contains([]string{"subscribe", "unsubscribe", "denied"}, mode) {
						mode = "other"
					}
					st, _, _ := status(t, client, method, base+path+query, "", headers)
					mu.Lock()
					callback++
					if st == http.StatusNotFound {
						modes[mode]++
					}
					mu.Unlock()
				case 1:
					method, path = "GET", "/feeds/news/"+feedID+"/items"
					query = "?limit=" + strconv.Itoa(rng.IntN(150)) + "&cursor=" + garbage(rng, 1+rng.IntN(70))
					status(t, client, method, base+path+query, "", headers)
				case 2:
					key := fmt.Sprintf("kept-%d-%d-%s", w, i, strings.Repeat("k", rng.IntN(100)))
					method, path = "POST", "/feeds/news"
					body = fmt.Sprintf(`{"name":"feed %d %d %s","description":"d"}`, w, i, strings.Repeat("n", rng.IntN(150)))
					headers["Idempotency-Key"] = key
					headers["Content-Type"] = "application/json"
					st, _, raw := status(t, client, method, base+path, body, headers)
					if st != http.StatusCreated {
						t.Errorf("POST /feeds/news answered %d: %s", st, raw)
						continue
					}
					mu.Lock()
					replays[key] = [2]string{body, raw}
					mu.Unlock()
				default:
					method, path = "GET", "/feeds/"+strings.Repeat("z", 1+rng.IntN(90))
					status(t, client, method, base+path, "", headers)
				}
				mu.Lock()
				sent[rid] = sentRequest{method: method, path: path}
				mu.Unlock()
			}
		})
	}
	f.add(t, att, full(5))
	wg.Wait()
	for i := 2; i < 5; i++ {
		if got := resumed.next(10 * time.Second).ID; got != eventIDs[i] {
			t.Fatalf("the resumed stream sent %s as event %d; want %s", got, i, eventIDs[i])
		}
	}
	resumed.next(10 * time.Second)
	resumed.quiet(300 * time.Millisecond)

	t.Run("metric labels", func(t *testing.T) {
		families := wantMetricsIntact(t, h, base)
		for mode, n := range modes {
			if got := counted(families, "feedsvc_websub_verifications_total", map[string]string{"mode": mode, "result": "refused"}); got != n {
				t.Errorf("%d refused %s verifications counted; %d were answered", got, mode, n)
			}
		}
		if got := counted(families, "feedsvc_http_requests_total", map[string]string{"method": "GET", "route": "/websub/:id"}); got != callback {
			t.Errorf("%d callback requests counted; %d were sent", got, callback)
		}
	})
	t.Run("log records read after the answers", func(t *testing.T) {
		lines := kept.requestLines()
		for rid, want := range sent {
			got := lines[rid]
			if len(got) != 1 {
				t.Errorf("request %s has %d request lines; want 1", rid, len(got))
				continue
			}
			if got[0]["method"] != want.method || got[0]["path"] != want.path {
				t.Errorf("request %s was %s %s; its kept line says %s %s", rid, want.method, want.path, got[0]["method"], got[0]["path"])
			}
		}
	})
	t.Run("idempotency records", func(t *testing.T) {
		client := &http.Client{Timeout: 30 * time.Second}
		for key, r := range replays {
			st, header, raw := status(t, client, "POST", base+"/feeds/news", r[0],
				map[string]string{"Authorization": "Bearer " + h.Key, "Idempotency-Key": key, "Content-Type": "application/json"})
			if st != http.StatusCreated || header.Get("Idempotent-Replayed") != "true" || raw != r[1] {
				t.Errorf("repeat of Idempotency-Key %s answered %d replayed %q %s; first answer %s", key, st, header.Get("Idempotent-Replayed"), raw, r[1])
			}
		}
	})
	t.Run("the callback's rate-limit keys", func(t *testing.T) {
		// Each id may make 20 requests at once and 10 a second after
		// (websub.DefaultRate); a limiter whose key was rewritten is
		// lost, and its id starts afresh. The total bound (200 a second,
		// 400 at once) is left room: the flood's share has come back.
		time.Sleep(2 * time.Second)
		rng := rand.New(rand.NewPCG(34, 34))
		ids := make([]string, 4)
		for i := range ids {
			ids[i] = callbackID(rng)
		}
		allowed := make([]int, len(ids))
		start := time.Now()
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				client := &http.Client{Timeout: 30 * time.Second}
				for range 60 {
					if st, _, _ := status(t, client, "GET", base+"/websub/"+id+"?hub.mode=subscribe", "", nil); st != http.StatusTooManyRequests {
						allowed[i]++
					}
				}
			})
		}
		wg.Wait()
		bound := 20 + int(10*time.Since(start).Seconds()) + 1
		for i, n := range allowed {
			if n > bound {
				t.Errorf("id %d had %d of 60 requests served within %s; its limit allows %d", i, n, time.Since(start).Round(time.Millisecond), bound)
			}
		}
	})
}
