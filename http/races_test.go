package http_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// raceRequest is one request of a race.
type raceRequest struct{ method, path, body string }

// race sends the requests at once with the harness key.
func race(h *servicetest.Harness, reqs ...raceRequest) []answer {
	out := make([]answer, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
			req.Header.Set("Authorization", "Bearer "+h.Key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.Test(req)
			if err != nil {
				out[i].err = err
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			out[i] = answer{status: resp.StatusCode, raw: string(raw)}
			out[i].err = json.Unmarshal(raw, &out[i].body)
		}()
	}
	wg.Wait()
	return out
}

// storedTypes lists the event types of a feed's stream.
func storedTypes(t *testing.T, h *servicetest.Harness, feedID string) []string {
	t.Helper()
	events, err := h.Service.Store.ReadStream(context.Background(), domain.FeedStream(domain.FeedNews, uuid.MustParse(feedID)), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// A write racing a delete answers with what it stored, or fails having
// stored nothing: never a 404 after storing its event (hardening issue,
// item 3). The answer comes from what the command decided, not from a
// read that the delete may already have emptied.
func TestAWriteRacingADeleteAnswersWithWhatItStoredOrStoresNothing(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	for round := 0; round < 40; round++ {
		feedID := createFeed(t, c, "Racing", "a feed about to go")["id"].(string)
		att := attach(t, c, feedID, site("race.example"))["id"].(string)
		answers := race(h,
			raceRequest{"PATCH", "/feeds/news/" + feedID, `{"name":"renamed"}`},
			raceRequest{"PATCH", "/feeds/news/" + feedID + "/sources/" + att, `{"enabled":false}`},
			raceRequest{"DELETE", "/feeds/news/" + feedID, ""},
		)
		for _, a := range answers {
			if a.err != nil || a.status >= 500 {
				t.Fatalf("round %d: answer %d %s (%v)", round, a.status, a.raw, a.err)
			}
		}
		stored := storedTypes(t, h, feedID)
		rename, disable := answers[0], answers[1]
		switch {
		case rename.status == http.StatusOK && !contains(stored, "NewsFeedRenamed"):
			t.Fatalf("round %d: the rename answered 200 but stored nothing: %v", round, stored)
		case rename.status == http.StatusOK && rename.body["data"].(map[string]any)["name"] != "renamed":
			t.Fatalf("round %d: the rename answered %s", round, rename.raw)
		case rename.status == http.StatusNotFound && contains(stored, "NewsFeedRenamed"):
			t.Fatalf("round %d: the rename answered 404 after storing its event: %v", round, stored)
		case disable.status == http.StatusOK && !contains(stored, "NewsSourceDisabled"):
			t.Fatalf("round %d: the disable answered 200 but stored nothing: %v", round, stored)
		case disable.status == http.StatusOK && disable.body["data"].(map[string]any)["enabled"] != false:
			t.Fatalf("round %d: the disable answered %s", round, disable.raw)
		case disable.status == http.StatusNotFound && contains(stored, "NewsSourceDisabled"):
			t.Fatalf("round %d: the disable answered 404 after storing its event: %v", round, stored)
		}
	}
}

// Each organization sees a shared sitemap record with the siteId it gave,
// never the one another organization created it with (hardening issue,
// item 6).
func TestAnOrganizationSeesASharedRecordWithItsOwnSiteID(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme, globex := as(h, h.Key), as(h, h.NewKey("globex"))
	acmeSite := wantDataObject(t, acme.do(t, "POST", "/sources", site("shared.example")), http.StatusCreated)["id"]
	globexSite := wantDataObject(t, globex.do(t, "POST", "/sources", site("mirror.example")), http.StatusCreated)["id"]
	// Both register one sitemap URL, each under a site of its own; the
	// record is one, each view its own.
	sitemap := func(siteID any) map[string]any {
		return map[string]any{"sourceType": "sitemap", "url": "https://shared.example/sitemap.xml", "siteId": siteID}
	}
	first := wantDataObject(t, acme.do(t, "POST", "/sources", sitemap(acmeSite)), http.StatusCreated)
	second := wantDataObject(t, globex.do(t, "POST", "/sources", sitemap(globexSite)), http.StatusCreated)
	if first["id"] != second["id"] {
		t.Fatalf("one sitemap URL, two records: %v %v", first["id"], second["id"])
	}
	if first["createdAt"] == second["createdAt"] || second["siteId"] != globexSite {
		t.Fatalf("globex sees %s; acme registered %s", jsonOf(second), jsonOf(first))
	}
	got := wantDataObject(t, globex.do(t, "GET", "/sources/"+second["id"].(string), nil), http.StatusOK)
	if jsonOf(got) != jsonOf(second) {
		t.Fatalf("globex gets %s, was answered %s", jsonOf(got), jsonOf(second))
	}
}
