package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/crawltest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Fuzz targets over what clients send: request bodies with their
// Content-Type and Content-Encoding (every body the OpenAPI document
// takes, event feed configs, webhooks, subscription addresses and WebSub
// pushes included), and queries (item lists, live streams, feed outputs
// and WebSub verifications). Whatever the input, the answer is never a
// 5xx, every error is a JSON envelope, and the exchange is as the
// OpenAPI document says (the harness holds it to the document). The seed
// corpus is in testdata/fuzz; `go test` runs it, and .ci/run fuzzes each
// target for a bounded time.

// fuzzAnswer sends req through the app and fails on a 5xx, on an error
// that is not a JSON envelope, and on anything the document does not say.
func fuzzAnswer(t *testing.T, h *servicetest.Harness, req *http.Request) {
	t.Helper()
	hh := *h
	hh.T = t // the fuzz target's own test; F's methods may not be used inside it
	resp, err := hh.Test(req)
	if err != nil {
		t.Fatalf("%s %s: no answer: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s answered %d: %s", req.Method, req.URL, resp.StatusCode, raw)
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode < 400 && !strings.HasPrefix(ct, "application/json") {
		// A feed output, a stream, a challenge or an acknowledgement: the
		// harness held its media type and body to the document.
		return
	}
	if !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s answered %d with Content-Type %q", req.Method, req.URL, resp.StatusCode, ct)
	}
	var body struct {
		Success *bool           `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   json.RawMessage `json:"error"`
		Code    string          `json:"code"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Success == nil {
		t.Fatalf("%s %s answered %d with no envelope: %q", req.Method, req.URL, resp.StatusCode, raw)
	}
	switch {
	case *body.Success && resp.StatusCode < 300:
	case !*body.Success && resp.StatusCode == http.StatusUnauthorized && body.Code == "AUTHENTICATION_FAILED":
	case !*body.Success && resp.StatusCode >= 400:
		var e struct{ Code, Message string }
		if json.Unmarshal(body.Error, &e) != nil || e.Code == "" || e.Message == "" {
			t.Fatalf("%s %s answered %d with an error without code and message: %q", req.Method, req.URL, resp.StatusCode, raw)
		}
	default:
		t.Fatalf("%s %s answered %d with success %v: %q", req.Method, req.URL, resp.StatusCode, *body.Success, raw)
	}
}

// fuzzFixture is what the fuzz targets send to: a news feed with an item,
// an event feed with an item, a subscription address of each, and a
// WebSub subscription its hub verified; streams end after a moment, so
// that each fuzzed stream request has an end.
type fuzzFixture struct {
	h                      *servicetest.Harness
	feed, item, att        string // news: paths, and the attachment id
	eventFeed, eventItem   string // paths
	newsToken, eventsToken string // subscription address tokens
	newsSub, eventsSub     string // subscription address paths
	callback               string // the WebSub callback's path
}

func newFuzzFixture(tb testing.TB) *fuzzFixture {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h := servicetest.Start(tb, servicetest.WithCrawler(), func(c *config.Config) {
		c.PublicURL = "http://" + ln.Addr().String()
		c.PollInterval, c.MaxPollInterval = time.Hour, time.Hour
		c.StreamMaxAge, c.StreamKeepAlive, c.StreamPoll = 50*time.Millisecond, 20*time.Millisecond, 10*time.Millisecond
	})
	h.Serve(ln)
	fx := &itemFixture{h: h}
	fx.feedID = h.Do("POST", "/feeds/news", map[string]string{"name": "items", "description": "d"}).MustStatus(tb, 201).Data()["id"].(string)
	att := h.Do("POST", "/feeds/news/"+fx.feedID+"/sources", map[string]string{"sourceType": "site", "domain": "news.example"}).MustStatus(tb, 201).Data()
	x := &fuzzFixture{h: h, feed: "/feeds/news/" + fx.feedID, att: att["id"].(string)}
	x.item = x.feed + "/items/" + fx.add(tb, att, full(1))
	events := newEventFeed(tb, h, "fuzzed")
	x.eventFeed = "/feeds/events/" + events.id.String()
	x.eventItem = x.eventFeed + "/items/" + events.add(tb, events.attach(tb, "events.example"),
		oneTime("fuzzed", time.Now().Add(24*time.Hour).Truncate(time.Hour), time.Hour)).String()
	token := func(path, output string) (string, string) {
		d := h.Do("POST", path+"/subscriptions", nil).MustStatus(tb, http.StatusCreated).Data()
		u, err := url.Parse(d["urls"].(map[string]any)[output].(string))
		if err != nil {
			tb.Fatal(err)
		}
		return u.Query().Get("token"), path + "/subscriptions/" + d["id"].(string)
	}
	x.newsToken, x.newsSub = token(x.feed, "atom")
	x.eventsToken, x.eventsSub = token(x.eventFeed, "calendar")
	// A site whose feed names a hub: the crawler's first poll subscribes,
	// and the hub verifies the subscription through the callback.
	hub := crawltest.NewHub(tb, time.Hour)
	site := crawltest.NewSite(tb, hub.URL, false, "First story")
	pushed := h.Do("POST", "/feeds/news", map[string]string{"name": "pushed", "description": "d"}).MustStatus(tb, 201).Data()["id"].(string)
	h.Do("POST", "/feeds/news/"+pushed+"/sources", map[string]string{"sourceType": "site", "domain": site.Domain()}).MustStatus(tb, 201)
	wait.Until(tb, 30*time.Second, "the hub to verify a subscription", func() bool { return hub.Subscribers() > 0 })
	u, err := url.Parse(hub.Requests("subscribe")[0].Callback)
	if err != nil {
		tb.Fatal(err)
	}
	x.callback = u.Path
	return x
}

// write is an operation the body fuzzers send to.
type write struct{ method, path string }

// writes are the operations the body fuzzers send to: every one of the
// OpenAPI document that takes a body, but POST /parse and POST
// /webhooks/test, which fetch from or send to the URL they are given, and
// the writes that take none. New routes go at the end: the corpus names
// routes by their index.
func (x *fuzzFixture) writes(tb testing.TB) []write {
	tb.Helper()
	feed, item, att, eventFeed := x.feed, x.item, x.att, x.eventFeed
	hook := x.h.Do("POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/in", "events": []string{"event.item_added"}}).MustStatus(tb, http.StatusCreated).Data()["id"].(string)
	return []write{
		{"POST", "/feeds/news"},
		{"PATCH", feed},
		{"POST", feed + "/sources"},
		{"PATCH", feed + "/sources/" + att},
		{"POST", item + "/feedback"},
		{"POST", "/sources"},
		{"POST", "/feeds/events"},
		{"PATCH", eventFeed},
		{"POST", eventFeed + "/sources"},
		{"POST", x.eventItem + "/feedback"},
		{"POST", "/webhooks"},
		{"PATCH", "/webhooks/" + hook},
		{"POST", feed + "/subscriptions"},
		{"DELETE", x.newsSub},
		{"POST", eventFeed + "/subscriptions"},
		{"DELETE", x.eventsSub},
		{"POST", x.callback},
	}
}

func FuzzRequestDecoding(f *testing.F) {
	x := newFuzzFixture(f)
	h := x.h
	routes := x.writes(f)
	f.Add(uint8(0), "application/json", "", []byte(`{"name":"n","description":"d"}`))
	f.Add(uint8(6), "application/json", "", []byte(`{"name":"n","description":"d","config":{"keywords":["jazz"],"geo":{"lat":52.5,"lng":13.4,"radiusKm":25}}}`))
	f.Add(uint8(7), "application/json", "", []byte(`{"config":{"keywords":["a\u00e9"],"theme":"dark"}}`))
	f.Add(uint8(8), "application/json", "", []byte(`{"sourceType":"site","domain":"events.example.org"}`))
	f.Add(uint8(9), "application/json", "", []byte(`{"rating":1,"comment":"good"}`))
	f.Add(uint8(10), "application/json", "", []byte(`{"url":"https://hooks.example.com/a","events":["event.item_added"]}`))
	f.Add(uint8(11), "application/json", "", []byte(`{"enabled":false,"url":"https://hooks.example.com/b"}`))
	f.Add(uint8(12), "", "", []byte(nil))
	f.Add(uint8(13), "application/json", "", []byte(`{}`))
	f.Add(uint8(14), "application/json", "gzip", []byte(`{"x":1}`))
	f.Add(uint8(15), "", "", []byte(nil))
	f.Add(uint8(16), "application/atom+xml", "", []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://example.com/a"/></entry></feed>`))
	f.Fuzz(func(t *testing.T, route uint8, contentType, contentEncoding string, body []byte) {
		if !httpguts.ValidHeaderFieldValue(contentType) || !httpguts.ValidHeaderFieldValue(contentEncoding) {
			t.Skip("not a header value a client can send")
		}
		fuzzWrite(t, h, routes[int(route)%len(routes)], body, map[string]string{"Content-Type": contentType, "Content-Encoding": contentEncoding})
	})
}

// fuzzWrite sends body to the write with the harness key and the headers
// (an empty one left out), and checks the answer (fuzzAnswer).
func fuzzWrite(t *testing.T, h *servicetest.Harness, rt write, body []byte, header map[string]string) {
	req, err := http.NewRequest(rt.method, "http://feedsvc"+rt.path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.Key)
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	fuzzAnswer(t, h, req)
}

// FuzzIdempotentWrites sends the writes with an Idempotency-Key: a key
// used again for another body answers 422, the same body its first answer
// (all of them documented).
func FuzzIdempotentWrites(f *testing.F) {
	x := newFuzzFixture(f)
	h := x.h
	routes := x.writes(f)
	// The same key for one body, another, and the first again: stored,
	// 422, replayed.
	for _, route := range []uint8{0, 12, 13, 14, 15} {
		key := "k-" + strconv.Itoa(int(route))
		f.Add(route, key, []byte(`{"name":"n","description":"d"}`))
		f.Add(route, key, []byte(`{"name":"n","description":"other"}`))
		f.Add(route, key, []byte(`{"name":"n","description":"d"}`))
	}
	f.Add(uint8(16), "k-16", []byte(`<feed/>`))
	f.Add(uint8(16), "k-16", []byte(`<feed></feed>`))
	f.Add(uint8(7), strings.Repeat("k", 256), []byte(`{}`))
	f.Add(uint8(10), "k\x7f", []byte(`{}`))
	f.Fuzz(func(t *testing.T, route uint8, key string, body []byte) {
		if !httpguts.ValidHeaderFieldValue(key) {
			t.Skip("not a header value a client can send")
		}
		// Spaces and tabs around a header's value are not part of it (RFC
		// 9110, 5.5): the server reads "0 " as "0", so the document is
		// checked against the key as sent.
		key = strings.Trim(key, " \t")
		if key == "" {
			t.Skip("no key: FuzzRequestDecoding's")
		}
		fuzzWrite(t, h, routes[int(route)%len(routes)], body, map[string]string{"Content-Type": "application/json", "Idempotency-Key": key})
	})
}

func FuzzItemQuery(f *testing.F) {
	x := newFuzzFixture(f)
	h := x.h
	// New paths go at the end: the corpus names them by their index.
	lists := []string{
		x.feed + "/items",
		"/v0" + x.feed + "/items",
		x.item,
		x.eventFeed + "/items",
		"/v0" + x.eventFeed + "/items",
		x.eventItem,
		x.feed + "/items/stream",
		x.eventFeed + "/items/stream",
		x.callback,
		x.feed + "/feed.atom",
		x.feed + "/feed.json",
		x.eventFeed + "/calendar.ics",
		x.feed + "/subscriptions",
	}
	f.Add(uint8(0), "limit=10&offset=0&since=2026-01-01&include=source")
	f.Add(uint8(3), "status=completed&orderBy=created&since=2026-11-20&until=2026-12-01T10:00:00%2B01:00&limit=5&offset=1&include=source")
	f.Add(uint8(4), "status=cancelled&orderBy=occurrence&until=2026-12-20")
	f.Add(uint8(0), "cursor=&limit=1&since=2026-01-01")
	f.Add(uint8(3), "cursor&status=scheduled&include=source")
	f.Add(uint8(4), "cursor=AQ&limit=2")
	// Cursors this run's feeds issued, which the fuzzer can then cut,
	// change and combine.
	f.Add(uint8(1), "cursor="+nextCursor(f, h.Do("GET", lists[0], nil)))
	f.Add(uint8(3), "limit=1&cursor="+nextCursor(f, h.Do("GET", lists[3], nil)))
	f.Add(uint8(6), "lastEventId=&include=source")
	f.Add(uint8(7), "lastEventId="+nextCursor(f, h.Do("GET", lists[3], nil)))
	f.Add(uint8(8), "hub.mode=subscribe&hub.topic=https%3A%2F%2Fexample.com%2Ffeed&hub.challenge=c&hub.lease_seconds=60")
	f.Add(uint8(8), "hub.mode=%ff%fe&hub.topic=x")
	f.Add(uint8(8), "hub.mode=subscribe&hub.mode=unsubscribe&hub.topic=x")
	f.Add(uint8(8), "hub.mode=denied&hub.topic=x&hub.reason=no")
	f.Add(uint8(9), "token="+x.newsToken)
	f.Add(uint8(10), "token="+x.newsToken+"x")
	f.Add(uint8(11), "token="+x.eventsToken)
	f.Add(uint8(12), "token=")
	f.Fuzz(func(t *testing.T, list uint8, query string) {
		// A request line cannot carry these bytes; the transport refuses
		// them before any query parsing (see the transport tests).
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' || r >= 0x80 }) {
			t.Skip("not a query a request line can carry")
		}
		u := &url.URL{Scheme: "http", Host: "feedsvc", Path: lists[int(list)%len(lists)], RawQuery: query}
		req, err := http.NewRequest("GET", u.String(), nil)
		if err != nil {
			t.Skip("not a URL")
		}
		req.Header.Set("Authorization", "Bearer "+h.Key)
		fuzzAnswer(t, h, req)
	})
}

// wantListOf fetches a list with the harness key.
func wantListOf(tb testing.TB, h *servicetest.Harness, path string) []map[string]any {
	tb.Helper()
	r := h.Do("GET", path, nil).MustStatus(tb, http.StatusOK)
	return r.List()
}
