package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/feedsvc/feedsvc/internal/servicetest"
)

// Fuzz targets over what clients send: request bodies with their
// Content-Type and Content-Encoding (every body the OpenAPI document
// takes, event feed configs and webhooks included), and item-list queries. Whatever the
// input, the answer is never a 5xx and always a JSON envelope. The seed
// corpus is in testdata/fuzz; `go test` runs it, and .ci/run fuzzes each
// target for a bounded time.

// fuzzAnswer sends req through the app and fails on a 5xx or on anything
// but a JSON envelope.
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
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
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

func FuzzRequestDecoding(f *testing.F) {
	fx := newItemFixture(f, full(1))
	h := fx.h
	att := wantListOf(f, h, "/feeds/news/"+fx.feedID+"/sources")[0]["id"].(string)
	feed := "/feeds/news/" + fx.feedID
	item := feed + "/items/" + fx.items[0]
	events := newEventFeed(f, h, "fuzzed")
	eventItem := events.add(f, events.attach(f, "events.example"), oneTime("fuzzed", time.Now().Add(24*time.Hour).Truncate(time.Hour), time.Hour))
	eventFeed := "/feeds/events/" + events.id.String()
	hook := h.Do("POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/in", "events": []string{"event.item_added"}}).MustStatus(f, http.StatusCreated).Data()["id"].(string)
	// Every operation of the OpenAPI document that takes a body, but POST
	// /parse and POST /webhooks/test, which fetch from or send to the URL
	// they are given. New routes go at the end: the corpus names routes by
	// their index.
	routes := []struct{ method, path string }{
		{"POST", "/feeds/news"},
		{"PATCH", feed},
		{"POST", feed + "/sources"},
		{"PATCH", feed + "/sources/" + att},
		{"POST", item + "/feedback"},
		{"POST", "/sources"},
		{"POST", "/feeds/events"},
		{"PATCH", eventFeed},
		{"POST", eventFeed + "/sources"},
		{"POST", eventFeed + "/items/" + eventItem.String() + "/feedback"},
		{"POST", "/webhooks"},
		{"PATCH", "/webhooks/" + hook},
	}
	f.Add(uint8(0), "application/json", "", []byte(`{"name":"n","description":"d"}`))
	f.Add(uint8(6), "application/json", "", []byte(`{"name":"n","description":"d","config":{"keywords":["jazz"],"geo":{"lat":52.5,"lng":13.4,"radiusKm":25}}}`))
	f.Add(uint8(7), "application/json", "", []byte(`{"config":{"keywords":["a\u00e9"],"theme":"dark"}}`))
	f.Add(uint8(8), "application/json", "", []byte(`{"sourceType":"site","domain":"events.example.org"}`))
	f.Add(uint8(9), "application/json", "", []byte(`{"rating":1,"comment":"good"}`))
	f.Add(uint8(10), "application/json", "", []byte(`{"url":"https://hooks.example.com/a","events":["event.item_added"]}`))
	f.Add(uint8(11), "application/json", "", []byte(`{"enabled":false,"url":"https://hooks.example.com/b"}`))
	f.Fuzz(func(t *testing.T, route uint8, contentType, contentEncoding string, body []byte) {
		if !httpguts.ValidHeaderFieldValue(contentType) || !httpguts.ValidHeaderFieldValue(contentEncoding) {
			t.Skip("not a header value a client can send")
		}
		rt := routes[int(route)%len(routes)]
		req, err := http.NewRequest(rt.method, "http://feedsvc"+rt.path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+h.Key)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if contentEncoding != "" {
			req.Header.Set("Content-Encoding", contentEncoding)
		}
		fuzzAnswer(t, h, req)
	})
}

func FuzzItemQuery(f *testing.F) {
	fx := newItemFixture(f, full(1))
	h := fx.h
	events := newEventFeed(f, h, "fuzzed")
	eventItem := events.add(f, events.attach(f, "events.example"), oneTime("fuzzed", time.Now().Add(24*time.Hour).Truncate(time.Hour), time.Hour))
	lists := []string{
		"/feeds/news/" + fx.feedID + "/items",
		"/v0/feeds/news/" + fx.feedID + "/items",
		"/feeds/news/" + fx.feedID + "/items/" + fx.items[0],
		events.items(),
		"/v0" + events.items(),
		events.items() + "/" + eventItem.String(),
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
