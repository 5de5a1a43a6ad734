package http_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

func TestMetricsExposeRequestsByRouteAndProjectorHealth(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	h.Do("POST", "/feeds/news", map[string]string{"name": "n", "description": "d"}).MustStatus(t, 201)
	h.Do("GET", "/feeds/news/not-a-uuid", nil).MustStatus(t, 400)
	resp, err := h.Test(httptest.NewRequest("GET", "/metrics", nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	for _, want := range []string{
		`feedsvc_http_requests_total{method="POST",route="/feeds/news/",status="201"} 1`,
		`feedsvc_http_requests_total{method="GET",route="/feeds/news/:feedId",status="400"} 1`,
		`feedsvc_projection_failing{projector="feeds"} 0`,
		`feedsvc_projection_events_read_total{projector="feeds"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s\n%s", want, grep(text, "feedsvc_http_requests_total"))
		}
	}
}

func TestAWrongMethodOnAKnownPathAnswers405WithAllow(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	r := h.Do("PUT", "/feeds/news", map[string]string{"name": "n"}).MustStatus(t, 405)
	if e := r.Body["error"].(map[string]any); e["code"] != "METHOD_NOT_ALLOWED" {
		t.Fatalf("error %v", e)
	}
	if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Fatalf("Allow %q, want GET and POST", allow)
	}
	h.Do("POST", "/feeds/news/00000000-0000-0000-0000-000000000000/items", nil).MustStatus(t, 405)
	h.Do("GET", "/feeds/news/x/y/z/w", nil).MustStatus(t, 404)
}

func grep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestACreateWhoseReadModelLagsAnswers503WithTheStoredId(t *testing.T) {
	t.Parallel()
	// No projector runs, so the write is stored but never becomes readable.
	h := servicetest.Start(t, func(c *config.Config) {
		delete(c.Roles, config.RoleProjections)
		c.ConsistencyTimeout = 200 * time.Millisecond
	})
	r := h.Do("POST", "/feeds/news", map[string]string{"name": "n", "description": "d"}).MustStatus(t, 503)
	e := r.Body["error"].(map[string]any)
	if e["code"] != "INTERNAL_ERROR" || e["resource"] != "feed" {
		t.Fatalf("error %v", e)
	}
	id, err := uuid.Parse(e["id"].(string))
	if err != nil {
		t.Fatalf("the 503 names no stored id: %v", e)
	}
	events, err := h.Service.Store.ReadStream(context.Background(), domain.FeedStream(domain.FeedNews, id), 0, 10)
	if err != nil {
		t.Fatalf("the feed named in the 503 was not stored: %v", err)
	}
	created, err := domain.DecodeEvent(events[0].Type, events[0].Data)
	if err != nil || created.(domain.FeedCreated).Name != "n" || created.(domain.FeedCreated).OrganizationID != orgOf(t, h) {
		t.Fatalf("the feed named in the 503 was not stored as created: %+v %v", created, err)
	}
}

func orgOf(t *testing.T, h *servicetest.Harness) uuid.UUID {
	t.Helper()
	p, err := h.Service.Keys.Authenticate(context.Background(), h.Key)
	if err != nil {
		t.Fatal(err)
	}
	return p.OrganizationID
}
