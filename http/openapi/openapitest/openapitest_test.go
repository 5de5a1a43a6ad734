package openapitest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
)

// These tests hold the checker itself to account: answers rendered by a
// stand-in server, each a little off the document, must be reported, and
// the answer as documented must not be. The service's own tests go
// through the same Check (servicetest), so what fails here fails there.

const (
	feedID = "0198f3a2-6c1e-7b3d-9a41-5e2f8c7d1b20"
	good   = `{"success":true,"data":{"id":"` + feedID + `","name":"Tech","description":"Technology news",` +
		`"createdAt":"2026-11-22T10:04:05.123Z","updatedAt":"2026-11-22T10:04:05.123Z"}}`
)

// answer is what the stand-in server says to one request.
type answer struct {
	status int
	body   string
	header map[string]string
}

// exchange sends one request through a validating client to a server that
// gives the answer, and returns what the checker reported.
func exchange(t *testing.T, method, target, body string, a answer) []string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	defer srv.Close()
	var mu sync.Mutex
	var reported []string
	client := &http.Client{Transport: &openapitest.Transport{Base: http.DefaultTransport, Report: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, fmt.Sprintf(format, args...))
	}}}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+target, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer fsk_aaaaaaaaaaaa_"+strings.Repeat("0", 64))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return reported
}

func TestAnswersThatDriftFromTheDocumentAreReported(t *testing.T) {
	get := "/feeds/news/" + feedID
	cases := []struct {
		name           string
		method, target string
		body           string
		answer         answer
	}{
		{"a field renamed (createdAt as created_at)", "GET", get, "",
			answer{200, strings.Replace(good, `"createdAt"`, `"created_at"`, 1), nil}},
		{"a field of another type (name as a number)", "GET", get, "",
			answer{200, strings.Replace(good, `"name":"Tech"`, `"name":42`, 1), nil}},
		{"a member the document does not name", "GET", get, "",
			answer{200, strings.Replace(good, `"name":"Tech"`, `"name":"Tech","enabled":true`, 1), nil}},
		{"a required member missing", "GET", get, "",
			answer{200, strings.Replace(good, `"description":"Technology news",`, ``, 1), nil}},
		{"a timestamp without milliseconds", "GET", get, "",
			answer{200, strings.Replace(good, `"2026-11-22T10:04:05.123Z"`, `"2026-11-22T10:04:05Z"`, 1), nil}},
		{"a status the operation does not document", "GET", get, "",
			answer{418, `{"success":false,"error":{"code":"TEAPOT","message":"no"}}`, nil}},
		{"a news 400 in the event dialect", "GET", "/feeds/news/not-a-uuid", "",
			answer{400, `{"success":false,"error":{"code":"BAD_REQUEST","message":"feedId: must be a UUID","details":{"field":"feedId","issue":"must be a UUID"}}}`, nil}},
		{"an event 404 naming a resource, as only news 404s do", "GET", "/feeds/events/" + feedID, "",
			answer{404, `{"success":false,"error":{"code":"NOT_FOUND","message":"feed not found","resource":"feed","id":"` + feedID + `"}}`, nil}},
		{"a flat 401 nested like other errors", "GET", get, "",
			answer{401, `{"success":false,"error":{"code":"AUTHENTICATION_FAILED","message":"no"}}`, map[string]string{"WWW-Authenticate": `Bearer realm="feedsvc"`}}},
		{"a header the document does not name", "GET", get, "",
			answer{200, good, map[string]string{"X-Feed-Shard": "3"}}},
		{"a route the document does not have, served", "GET", "/feeds/news/" + feedID + "/stats", "",
			answer{200, `{"success":true,"data":{}}`, nil}},
		{"a request the document refuses, accepted", "POST", "/feeds/news", `{"name":"Tech"}`,
			answer{201, good, nil}},
		{"a path deep below a capability not offered, answered other than documented", "GET", "/research/jobs/1", "",
			answer{200, `{"success":true,"data":{}}`, nil}},
		{"a rate-limit header on an unlimited route's answer spelled wrong", "GET", get, "",
			answer{200, good, map[string]string{"RateLimit-Remaining": "many"}}},
		{"a replay flag on a read", "GET", get, "",
			answer{200, good, map[string]string{"Idempotent-Replayed": "true"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is reported", func(t *testing.T) {
			if got := exchange(t, tc.method, tc.target, tc.body, tc.answer); len(got) == 0 {
				t.Fatalf("the checker let it pass")
			}
		})
	}
}

func TestAnswersAsDocumentedPass(t *testing.T) {
	cases := []struct {
		name           string
		method, target string
		body           string
		answer         answer
	}{
		{"a feed as documented", "GET", "/feeds/news/" + feedID, "", answer{200, good, nil}},
		{"a create as documented", "POST", "/feeds/news", `{"name":"Tech","description":"Technology news"}`, answer{201, good, nil}},
		{"a refused request answered 400", "POST", "/feeds/news", `{"name":"Tech"}`,
			answer{400, `{"success":false,"error":{"code":"VALIDATION_ERROR","message":"description: is required","details":{"field":"description","issue":"is required"}}}`, nil}},
		{"an unknown path answered 404", "GET", "/nope", "",
			answer{404, `{"success":false,"error":{"code":"NOT_FOUND","message":"no route serves this path"}}`, nil}},
		{"an unknown path answered 401, the key being checked first", "GET", "/nope", "",
			answer{401, `{"success":false,"error":"Authentication failed (api-key): missing Authorization header","code":"AUTHENTICATION_FAILED"}`, map[string]string{"WWW-Authenticate": `Bearer realm="feedsvc"`}}},
		{"a wrong method answered 405", "PUT", "/feeds/news", "{}",
			answer{405, `{"success":false,"error":{"code":"METHOD_NOT_ALLOWED","message":"this method is not allowed on this path"}}`, map[string]string{"Allow": "GET, POST"}}},
		{"a path deep below a capability not offered, answered 501", "DELETE", "/research/jobs/1", "",
			answer{501, `{"success":false,"error":{"code":"NOT_IMPLEMENTED","message":"deep research is not offered"}}`, nil}},
		{"a replayed create with its headers", "POST", "/feeds/news", `{"name":"Tech","description":"Technology news"}`,
			answer{201, good, map[string]string{"Idempotent-Replayed": "true", "X-Request-Id": "abc-1", "RateLimit-Limit": "600",
				"RateLimit-Remaining": "599", "RateLimit-Reset": "12", "RateLimit-Policy": "600;w=60"}}},
		{"an event feed echoing config members of its own", "GET", "/feeds/events/" + feedID, "",
			answer{200, `{"success":true,"data":{"id":"` + feedID + `","name":"n","description":"d","enabled":true,"enabledSource":"api",` +
				`"config":{"theme":"dark","version":1},"createdAt":"2026-11-22T10:04:05.123Z","updatedAt":"2026-11-22T10:04:05.123Z"}}`, nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name+" passes", func(t *testing.T) {
			if got := exchange(t, tc.method, tc.target, tc.body, tc.answer); len(got) != 0 {
				t.Fatalf("the checker reported an answer as documented:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

func TestTheServiceDocumentIsValidOpenAPI31AndItsExamplesMatchTheirSchemas(t *testing.T) {
	c, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	if problems := c.CheckExamples(); len(problems) > 0 {
		t.Fatalf("examples that do not match their schemas:\n%s", strings.Join(problems, "\n"))
	}
}

func TestWebhookDeliveriesAreHeldToTheDocumentedWebhook(t *testing.T) {
	checker, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	body := `{"event":"event.item_added","timestamp":"2026-11-22T10:04:05.123Z","data":{"id":"` + feedID + `","eventId":"` + feedID + `",` +
		`"title":"t","description":"d","shortDescription":null,"addedToFeedAt":"2026-11-22T10:04:05.123Z","publishedAt":null,` +
		`"occurrence":{"nextOccurrence":null,"occurrencesInRange":[],"totalOccurrences":0,"upcomingOccurrences":0},` +
		`"time":null,"location":null,"capacity":null,"organizer":null,"primaryImage":null,"supportingImages":[],"primaryUrl":null,"urls":[],"geoLocations":[]}}`
	headers := func(drop string) http.Header {
		h := http.Header{}
		h.Set("x-service-signature", strings.Repeat("ab", 32))
		h.Set("x-service-timestamp", "1795428245")
		h.Set("x-service-webhook-id", feedID)
		h.Set("x-service-event-id", feedID)
		// The Standard Webhooks headers every delivery carries too.
		h.Set("webhook-id", feedID)
		h.Set("webhook-timestamp", "1795428245")
		h.Set("webhook-signature", "v1,"+strings.Repeat("A", 43)+"=")
		h.Del(drop)
		return h
	}
	if problems := checker.CheckWebhook("event.item_added", headers(""), []byte(body)); len(problems) > 0 {
		t.Fatalf("a delivery as documented was reported:\n%s", strings.Join(problems, "\n"))
	}
	cases := []struct {
		name   string
		header http.Header
		body   string
	}{
		{"a member renamed", headers(""), strings.Replace(body, `"addedToFeedAt"`, `"addedAt"`, 1)},
		{"a member the document does not name", headers(""), strings.Replace(body, `"title":"t"`, `"title":"t","sourceType":"site"`, 1)},
		{"a header missing", headers("x-service-event-id"), body},
		{"a signature in upper case", func() http.Header { h := headers(""); h.Set("x-service-signature", strings.Repeat("AB", 32)); return h }(), body},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is reported", func(t *testing.T) {
			if problems := checker.CheckWebhook("event.item_added", tc.header, []byte(tc.body)); len(problems) == 0 {
				t.Fatal("the checker let it pass")
			}
		})
	}
}
