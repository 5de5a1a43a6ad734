package http_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// This file holds the helpers every contract test of the package shares, and
// the tests of the error envelope itself (api.md section 7, D2).

// caller sends requests as one API key. Every answer goes through send, which
// fails the test on any 5xx and on any body that is not JSON.
type caller struct {
	h   *servicetest.Harness
	key string
}

func as(h *servicetest.Harness, key string) caller { return caller{h: h, key: key} }

// do sends a request with the caller's key; body is nil, a string sent as is,
// or a value sent as JSON (with a JSON content type).
func (c caller) do(t *testing.T, method, path string, body any) servicetest.Response {
	t.Helper()
	return send(t, c.h, method, path, body, map[string]string{"Authorization": "Bearer " + c.key})
}

// doWith sends a request with the caller's key plus the given headers.
func (c caller) doWith(t *testing.T, method, path string, body any, headers map[string]string) servicetest.Response {
	t.Helper()
	all := map[string]string{"Authorization": "Bearer " + c.key}
	for k, v := range headers {
		all[k] = v
	}
	return send(t, c.h, method, path, body, all)
}

// send sends a request with exactly the given headers. It never lets a 5xx
// or a non-JSON answer pass: the contract has no case that asks for one.
func send(t *testing.T, h *servicetest.Harness, method, path string, body any, headers map[string]string) servicetest.Response {
	t.Helper()
	hh := *h
	hh.T = t // failures are reported on the (sub)test that made the call
	r := hh.DoWith(method, path, body, headers)
	if r.Status >= 500 {
		t.Fatalf("%s %s answered %d (never a 5xx in these tests); body %s", method, path, r.Status, r.Raw)
	}
	if r.Raw == "" {
		t.Fatalf("%s %s answered %d with an empty body; want a JSON envelope", method, path, r.Status)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s answered %d with Content-Type %q; want application/json", method, path, r.Status, ct)
	}
	return r
}

// ---- shape assertions ------------------------------------------------------

var (
	timestampFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	uuidFormat      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// wantKeys fails unless m has exactly the keys.
func wantKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	want := slices.Clone(keys)
	sort.Strings(want)
	if got := keysOf(m); !slices.Equal(got, want) {
		t.Fatalf("%s has keys %v, want exactly %v; value %v", what, got, want, m)
	}
}

// wantObject fails unless v is a JSON object and returns it.
func wantObject(t *testing.T, what string, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T (%v), want an object", what, v, v)
	}
	return m
}

// wantString fails unless v is a non-empty string and returns it.
func wantString(t *testing.T, what string, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok || s == "" {
		t.Fatalf("%s is %T %v, want a non-empty string", what, v, v)
	}
	return s
}

// wantUUID fails unless v is a lowercase canonical UUID string.
func wantUUID(t *testing.T, what string, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok || !uuidFormat.MatchString(s) {
		t.Fatalf("%s is %T %v, want a UUID string", what, v, v)
	}
	return s
}

// wantTimestamp fails unless v is a UTC timestamp with exactly three
// fractional digits (D2) and returns it parsed.
func wantTimestamp(t *testing.T, what string, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	if !ok || !timestampFormat.MatchString(s) {
		t.Fatalf("%s is %T %v, want a timestamp like 2026-11-22T10:04:05.123Z", what, v, v)
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s %q does not parse: %v", what, s, err)
	}
	if d := time.Since(ts); d < -time.Minute || d > time.Hour {
		t.Fatalf("%s %q is not near the current time", what, s)
	}
	return ts
}

// wantData fails unless r is a success envelope {success:true,data} with
// the status, and returns data.
func wantData(t *testing.T, r servicetest.Response, status int) any {
	t.Helper()
	r.MustStatus(t, status)
	wantKeys(t, "success body", r.Body, "success", "data")
	if r.Body["success"] != true {
		t.Fatalf("success is %v, want true; body %s", r.Body["success"], r.Raw)
	}
	return r.Body["data"]
}

// wantDataObject is wantData for an object payload.
func wantDataObject(t *testing.T, r servicetest.Response, status int) map[string]any {
	t.Helper()
	return wantObject(t, "data", wantData(t, r, status))
}

// wantDataList is wantData for an array payload (200); the array may be
// empty but never null.
func wantDataList(t *testing.T, r servicetest.Response) []map[string]any {
	t.Helper()
	arr, ok := wantData(t, r, http.StatusOK).([]any)
	if !ok {
		t.Fatalf("data is not an array; body %s", r.Raw)
	}
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		out[i] = wantObject(t, fmt.Sprintf("data[%d]", i), v)
	}
	return out
}

// wantDeleted fails unless r is exactly 200 {"success":true}.
func wantDeleted(t *testing.T, r servicetest.Response) {
	t.Helper()
	r.MustStatus(t, http.StatusOK)
	wantKeys(t, "delete body", r.Body, "success")
	if r.Body["success"] != true {
		t.Fatalf("delete body %s, want {\"success\":true}", r.Raw)
	}
}

// wantError fails unless r is {success:false, error:{code, message, ...}}
// with the status and code, and returns the error object.
func wantError(t *testing.T, r servicetest.Response, status int, code string) map[string]any {
	t.Helper()
	r.MustStatus(t, status)
	wantKeys(t, "error body", r.Body, "success", "error")
	if r.Body["success"] != false {
		t.Fatalf("success is %v, want false; body %s", r.Body["success"], r.Raw)
	}
	e := wantObject(t, "error", r.Body["error"])
	if e["code"] != code {
		t.Fatalf("error.code is %v, want %s; body %s", e["code"], code, r.Raw)
	}
	wantString(t, "error.message", e["message"])
	return e
}

// wantValidation fails unless r is a 400 VALIDATION_ERROR whose details
// name field.
func wantValidation(t *testing.T, r servicetest.Response, field string) {
	t.Helper()
	e := wantError(t, r, http.StatusBadRequest, "VALIDATION_ERROR")
	wantKeys(t, "error", e, "code", "message", "details")
	d := wantObject(t, "error.details", e["details"])
	wantKeys(t, "error.details", d, "field", "issue")
	if d["field"] != field {
		t.Fatalf("error.details.field is %v, want %q; body %s", d["field"], field, r.Raw)
	}
	wantString(t, "error.details.issue", d["issue"])
}

// wantNotFound fails unless r is a news-style 404 naming resource and id.
func wantNotFound(t *testing.T, r servicetest.Response, resource, id string) {
	t.Helper()
	e := wantError(t, r, http.StatusNotFound, "NOT_FOUND")
	wantKeys(t, "error", e, "code", "message", "resource", "id")
	if e["resource"] != resource || e["id"] != id {
		t.Fatalf("404 names %v %v, want %s %s; body %s", e["resource"], e["id"], resource, id, r.Raw)
	}
}

// wantConflict fails unless r is 409 CONFLICT.
func wantConflict(t *testing.T, r servicetest.Response) {
	t.Helper()
	e := wantError(t, r, http.StatusConflict, "CONFLICT")
	wantKeys(t, "error", e, "code", "message")
}

// ---- fixtures --------------------------------------------------------------

// createFeed creates a news feed and returns its data.
func createFeed(t *testing.T, c caller, name, description string) map[string]any {
	t.Helper()
	return wantDataObject(t, c.do(t, "POST", "/feeds/news", map[string]any{"name": name, "description": description}), http.StatusCreated)
}

// attach adds a source to a feed, expecting 201, and returns the attachment.
func attach(t *testing.T, c caller, feedID string, body map[string]any) map[string]any {
	t.Helper()
	return wantDataObject(t, c.do(t, "POST", "/feeds/news/"+feedID+"/sources", body), http.StatusCreated)
}

func site(domain string) map[string]any {
	return map[string]any{"sourceType": "site", "domain": domain}
}

func randomID() string { return uuid.NewString() }

// ---- the error envelope ----------------------------------------------------

func TestBodiesThatAreNotASingleJSONObjectAnswer400NamingTheBody(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createFeed(t, c, "Bodies", "bad bodies")
	feedID := feed["id"].(string)
	att := attach(t, c, feedID, site("bodies.example"))
	attID := att["id"].(string)

	endpoints := []struct{ method, path string }{
		{"POST", "/feeds/news"},
		{"PATCH", "/feeds/news/" + feedID},
		{"POST", "/feeds/news/" + feedID + "/sources"},
		{"PATCH", "/feeds/news/" + feedID + "/sources/" + attID},
		{"POST", "/sources"},
	}
	bodies := []struct {
		name string
		body any
	}{
		{"no body", nil},
		{"whitespace only", "   \n"},
		{"malformed JSON", `{"name": "x",`},
		{"unquoted keys", `{name: "x"}`},
		{"a JSON array", `[{"name":"x","description":"y"}]`},
		{"a JSON string", `"hello"`},
		{"JSON null", `null`},
		{"trailing garbage", `{"name":"x","description":"y"} trailing`},
		{"two objects", `{"name":"x","description":"y"}{"name":"z"}`},
	}
	for _, ep := range endpoints {
		for _, b := range bodies {
			t.Run(ep.method+" "+ep.path+" with "+b.name, func(t *testing.T) {
				wantValidation(t, c.do(t, ep.method, ep.path, b.body), "body")
			})
		}
	}
	t.Run("a non-JSON content type answers 400", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml"} {
			r := c.doWith(t, "POST", "/feeds/news", `{"name":"x","description":"y"}`, map[string]string{"Content-Type": ct})
			wantValidation(t, r, "body")
		}
	})
	t.Run("a JSON content type with a charset is accepted", func(t *testing.T) {
		r := c.doWith(t, "POST", "/feeds/news", `{"name":"x","description":"y"}`, map[string]string{"Content-Type": "application/json; charset=utf-8"})
		wantDataObject(t, r, http.StatusCreated)
	})
	t.Run("none of the refused bodies changed anything", func(t *testing.T) {
		feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil))
		if len(feeds) != 2 { // "Bodies" and the charset one
			t.Fatalf("%d feeds after refused writes, want 2: %v", len(feeds), feeds)
		}
		got := wantDataObject(t, c.do(t, "GET", "/feeds/news/"+feedID, nil), http.StatusOK)
		if got["name"] != "Bodies" || got["updatedAt"] != feed["updatedAt"] {
			t.Fatalf("feed changed by refused writes: %v", got)
		}
		srcs := wantDataList(t, c.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil))
		if len(srcs) != 1 || srcs[0]["enabled"] != true {
			t.Fatalf("sources changed by refused writes: %v", srcs)
		}
	})
}

func TestABodyOverTheOneMebibyteLimitAnswers413WithAJSONEnvelope(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	// Fiber's in-memory transport (app.Test) reports an oversized body as a
	// Go error instead of the response, so this test uses a real socket.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = h.Service.App.Listener(ln)
	}()
	t.Cleanup(func() {
		_ = h.Service.App.ShutdownWithTimeout(5 * time.Second)
		<-served
	})
	base := "http://" + ln.Addr().String()

	post := func(t *testing.T, body string) (int, map[string]any, http.Header) {
		t.Helper()
		req, err := http.NewRequest("POST", base+"/feeds/news", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+h.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := documentedClient(t).Do(req)
		if err != nil {
			t.Fatalf("POST /feeds/news: %v", err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("answer %d is not JSON: %q", resp.StatusCode, raw)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("answer %d: %s", resp.StatusCode, raw)
		}
		return resp.StatusCode, out, resp.Header
	}

	// The request announces a body one byte over the limit. The server
	// refuses it from the Content-Length once the body starts arriving (a
	// first few KiB), without waiting for the rest, and drains the rest
	// after answering (bodylimit_test.go follows the connection further).
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST /feeds/news HTTP/1.1\r\nHost: feedsvc\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", h.Key, 1<<20+1)
	go func() { _, _ = io.WriteString(conn, strings.Repeat(" ", 1<<20+1)) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer to an oversized body: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("answer %d is not JSON: %q", resp.StatusCode, raw)
	}
	status, header := resp.StatusCode, resp.Header
	r := servicetest.Response{Status: status, Body: body, Raw: string(raw), Header: header}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("413 with Content-Type %q", ct)
	}
	e := wantError(t, r, http.StatusRequestEntityTooLarge, "VALIDATION_ERROR")
	wantKeys(t, "error", e, "code", "message", "details")
	d := wantObject(t, "error.details", e["details"])
	wantKeys(t, "error.details", d, "field", "issue")
	if d["field"] != "body" {
		t.Fatalf("413 names field %v, want body", d["field"])
	}
	if feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
		t.Fatalf("an oversized create left %d feeds", len(feeds))
	}
	t.Run("a body just under the limit is read and judged on its content", func(t *testing.T) {
		// Nearly 1 MiB of name is far over the name limit: a 400, not a 413.
		body := `{"name":"` + strings.Repeat("a", 1<<20-64) + `","description":"x"}`
		wantValidation(t, c.do(t, "POST", "/feeds/news", body), "name")
	})
	t.Run("the server still answers on the same address", func(t *testing.T) {
		status, body, _ := post(t, `{"name":"after","description":"the big one"}`)
		if status != http.StatusCreated || body["success"] != true {
			t.Fatalf("answer %d %s", status, jsonOf(body))
		}
	})
}

func TestMalformedUUIDsInPathsAnswer400NeverA404(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "UUIDs", "paths")["id"].(string)
	attID := attach(t, c, feedID, site("uuids.example"))["id"].(string)

	bad := []string{"not-a-uuid", "123", strings.ToUpper(feedID[:35]), feedID + "0", "{" + feedID + "}", "urn:uuid:" + feedID, strings.ReplaceAll(feedID, "-", "")}
	for _, b := range bad {
		cases := []struct {
			method, path, field string
			body                any
		}{
			{"GET", "/feeds/news/" + b, "feedId", nil},
			{"PATCH", "/feeds/news/" + b, "feedId", map[string]any{"name": "x"}},
			{"DELETE", "/feeds/news/" + b, "feedId", nil},
			{"GET", "/feeds/news/" + b + "/sources", "feedId", nil},
			{"POST", "/feeds/news/" + b + "/sources", "feedId", site("x.example")},
			{"PATCH", "/feeds/news/" + b + "/sources/" + attID, "feedId", map[string]any{"enabled": false}},
			{"DELETE", "/feeds/news/" + b + "/sources/" + attID, "feedId", nil},
			{"PATCH", "/feeds/news/" + feedID + "/sources/" + b, "sourceId", map[string]any{"enabled": false}},
			{"DELETE", "/feeds/news/" + feedID + "/sources/" + b, "sourceId", nil},
			{"GET", "/sources/" + b, "id", nil},
		}
		for _, tc := range cases {
			t.Run(tc.method+" "+tc.path, func(t *testing.T) {
				wantValidation(t, c.do(t, tc.method, tc.path, tc.body), tc.field)
			})
		}
	}
	t.Run("an uppercase UUID names the same feed", func(t *testing.T) {
		got := wantDataObject(t, c.do(t, "GET", "/feeds/news/"+strings.ToUpper(feedID), nil), http.StatusOK)
		if got["id"] != feedID {
			t.Fatalf("id %v, want %s", got["id"], feedID)
		}
	})
	t.Run("nothing was changed or deleted", func(t *testing.T) {
		wantDataObject(t, c.do(t, "GET", "/feeds/news/"+feedID, nil), http.StatusOK)
		srcs := wantDataList(t, c.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil))
		if len(srcs) != 1 || srcs[0]["enabled"] != true {
			t.Fatalf("sources after refused requests: %v", srcs)
		}
	})
}

func TestUnknownRoutesAndWrongMethodsAnswerAJSONError(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Routes", "methods")["id"].(string)

	t.Run("an unknown route answers a JSON 404", func(t *testing.T) {
		for _, p := range []string{"/nope", "/feeds/nope", "/feeds/news/" + feedID + "/nope", "/feeds/news/" + feedID + "/sources/" + randomID() + "/extra"} {
			e := wantError(t, c.do(t, "GET", p, nil), http.StatusNotFound, "NOT_FOUND")
			if _, ok := e["details"]; ok {
				t.Fatalf("a route 404 carries details: %v", e)
			}
		}
	})
	cases := []struct{ method, path string }{
		{"PUT", "/feeds/news"},
		{"DELETE", "/feeds/news"},
		{"PATCH", "/feeds/news"},
		{"POST", "/feeds/news/" + feedID},
		{"PUT", "/feeds/news/" + feedID},
		{"PUT", "/feeds/news/" + feedID + "/sources"},
		{"DELETE", "/feeds/news/" + feedID + "/sources"},
		{"GET", "/feeds/news/" + feedID + "/sources/" + randomID()},
		{"DELETE", "/sources"},
		{"DELETE", "/sources/" + randomID()},
		{"POST", "/healthz"},
	}
	for _, tc := range cases {
		t.Run("a wrong method "+tc.method+" "+tc.path+" answers a JSON error", func(t *testing.T) {
			r := c.do(t, tc.method, tc.path, `{}`)
			if r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed {
				t.Fatalf("status %d, want 404 or 405; body %s", r.Status, r.Raw)
			}
			code := "NOT_FOUND"
			if r.Status == http.StatusMethodNotAllowed {
				code = "METHOD_NOT_ALLOWED"
			}
			wantError(t, r, r.Status, code)
		})
	}
	t.Run("the feed survived the wrong methods", func(t *testing.T) {
		wantDataObject(t, c.do(t, "GET", "/feeds/news/"+feedID, nil), http.StatusOK)
	})
}

func TestNotFoundBodiesForMissingAndForeignFeedsAreIdentical(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))
	foreign := createFeed(t, globex, "Globex feed", "theirs")["id"].(string)
	missing := randomID()

	normalized := func(t *testing.T, r servicetest.Response, id string) string {
		t.Helper()
		wantNotFound(t, r, "feed", id)
		return strings.ReplaceAll(r.Raw, id, "<id>")
	}
	cases := []struct {
		method, suffix string
		body           any
	}{
		{"GET", "", nil},
		{"PATCH", "", map[string]any{"name": "mine now"}},
		{"DELETE", "", nil},
		{"GET", "/sources", nil},
		{"POST", "/sources", site("steal.example")},
		{"PATCH", "/sources/" + randomID(), map[string]any{"enabled": false}},
		{"DELETE", "/sources/" + randomID(), nil},
	}
	for _, tc := range cases {
		t.Run(tc.method+" /feeds/news/{id}"+tc.suffix, func(t *testing.T) {
			a := normalized(t, acme.do(t, tc.method, "/feeds/news/"+missing+tc.suffix, tc.body), missing)
			b := normalized(t, acme.do(t, tc.method, "/feeds/news/"+foreign+tc.suffix, tc.body), foreign)
			if a != b {
				t.Fatalf("a missing feed answers\n%s\nanother organization's feed answers\n%s", a, b)
			}
		})
	}
	t.Run("the foreign feed is untouched", func(t *testing.T) {
		got := wantDataObject(t, globex.do(t, "GET", "/feeds/news/"+foreign, nil), http.StatusOK)
		if got["name"] != "Globex feed" {
			t.Fatalf("foreign feed changed: %v", got)
		}
		if srcs := wantDataList(t, globex.do(t, "GET", "/feeds/news/"+foreign+"/sources", nil)); len(srcs) != 0 {
			t.Fatalf("foreign feed got sources: %v", srcs)
		}
		if recs := wantDataList(t, acme.do(t, "GET", "/sources", nil)); len(recs) != 0 {
			t.Fatalf("an add to a foreign feed left source records: %v", recs)
		}
	})
}

// jsonOf renders v for failure messages.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
