package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// logCaughtUp waits until the orglog projector has projected the whole
// log, writes of the setup helpers included.
func logCaughtUp(t *testing.T, h *servicetest.Harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Service.Runner.Progress("orglog").WaitFor(ctx, projectortest.HeadPosition(t, h.Service.DB)); err != nil {
		t.Fatalf("orglog did not catch up: %v", err)
	}
}

// readLogOver pages through GET /log with query q (after excluded) as
// key, limit events a page, and returns the events.
func readLogOver(t *testing.T, h *servicetest.Harness, key string, q url.Values, limit int) []map[string]any {
	t.Helper()
	var out []map[string]any
	after := ""
	for pages := 0; ; pages++ {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("after", after)
		v.Set("limit", strconv.Itoa(limit))
		r := h.DoWith("GET", "/log?"+v.Encode(), nil, map[string]string{"Authorization": "Bearer " + key})
		data := wantDataObject(t, r, 200)
		for _, e := range data["events"].([]any) {
			out = append(out, e.(map[string]any))
		}
		p := data["pagination"].(map[string]any)
		if len(data["events"].([]any)) > limit {
			t.Fatalf("a page of limit %d holds %d events", limit, len(data["events"].([]any)))
		}
		if p["hasMore"] != true {
			return out
		}
		if p["nextPosition"] == after || pages > 10000 {
			t.Fatalf("paging does not move: %v", p)
		}
		after = p["nextPosition"].(string)
	}
}

func positions(events []map[string]any) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e["position"].(string)
	}
	return out
}

func TestTheLogOverHTTPPagesAnOrganizationsEventsFiltersThemAndShowsNoOtherOrganizations(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	hist := servicetest.WriteFeedbackHistory(h, 3)
	logCaughtUp(t, h)

	acme := readLogOver(t, h, h.Key, nil, 17)
	globex := readLogOver(t, h, hist.OtherKey, nil, 1000)
	if len(acme) < 50 || len(globex) < 10 {
		t.Fatalf("the logs hold %d and %d events: too few to tell", len(acme), len(globex))
	}
	whole := readLogOver(t, h, h.Key, nil, 1000)
	if !slices.Equal(positions(acme), positions(whole)) {
		t.Fatalf("paging by 17 gives %d events, one page %d", len(acme), len(whole))
	}
	for i := 1; i < len(acme); i++ {
		a, b := acme[i-1]["position"].(string), acme[i]["position"].(string)
		if !positionLess(a, b) {
			t.Fatalf("events out of log order: %s then %s", a, b)
		}
	}

	t.Run("another organization's events and feeds never appear", func(t *testing.T) {
		ids := map[string]bool{}
		for _, e := range acme {
			ids[e["id"].(string)] = true
			if strings.Contains(mustJSON(t, e), hist.OtherFeed.String()) || strings.Contains(mustJSON(t, e), hist.Other.String()) {
				t.Errorf("acme's log names globex: %s", mustJSON(t, e))
			}
		}
		for _, e := range globex {
			if ids[e["id"].(string)] {
				t.Errorf("event %s is in both logs", e["id"])
			}
			if strings.Contains(mustJSON(t, e), hist.Org.String()) {
				t.Errorf("globex's log names acme: %s", mustJSON(t, e))
			}
		}
		// A feed of another organization filters to nothing.
		if got := readLogOver(t, h, h.Key, url.Values{"feedId": {hist.OtherFeed.String()}}, 100); len(got) != 0 {
			t.Errorf("acme reads %d events of globex's feed", len(got))
		}
	})

	t.Run("type and feed filters keep exactly the matching events", func(t *testing.T) {
		for _, q := range []url.Values{
			{"type": {"FeedbackGiven"}},
			{"type": {"NewsItemAdded,NewsFeedCreated"}},
			{"feedId": {hist.News[0].String()}},
			{"feedId": {hist.Events[0].String()}, "type": {"EventItemAdded"}},
		} {
			var want []string
			types := strings.Split(q.Get("type"), ",")
			for _, e := range whole {
				feeds := e["feedIds"].([]any)
				if (q.Get("type") == "" || slices.Contains(types, e["type"].(string))) &&
					(q.Get("feedId") == "" || slices.Contains(feeds, any(q.Get("feedId")))) {
					want = append(want, e["position"].(string))
				}
			}
			got := positions(readLogOver(t, h, h.Key, q, 5))
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%v: got %d events, want %d", q, len(got), len(want))
			}
		}
	})

	t.Run("reading after the last position gives nothing and stays there", func(t *testing.T) {
		last := whole[len(whole)-1]["position"].(string)
		data := wantDataObject(t, as(h, h.Key).do(t, "GET", "/log?after="+last, nil), 200)
		if n := len(data["events"].([]any)); n != 0 {
			t.Fatalf("%d events after the last", n)
		}
		if p := data["pagination"].(map[string]any); p["nextPosition"] != last || p["hasMore"] != false {
			t.Fatalf("pagination %v, want nextPosition %s", p, last)
		}
	})

	t.Run("every event carries its schema version and a feedback event its rating", func(t *testing.T) {
		for _, e := range whole {
			if e["schemaVersion"] != float64(1) {
				t.Errorf("%s has schemaVersion %v", e["type"], e["schemaVersion"])
			}
			if e["type"] == "FeedbackGiven" {
				if d := e["data"].(map[string]any); d["rating"] == nil || d["itemId"] == nil {
					t.Errorf("feedback without rating or item: %v", d)
				}
			}
		}
	})
}

func positionLess(a, b string) bool {
	ac, ap, _ := strings.Cut(a, "-")
	bc, bp, _ := strings.Cut(b, "-")
	if len(ac) != len(bc) || ac != bc {
		if len(ac) != len(bc) {
			return len(ac) < len(bc)
		}
		return ac < bc
	}
	if len(ap) != len(bp) {
		return len(ap) < len(bp)
	}
	return ap < bp
}

// A write answered 2xx is in the log of the next read (the promise every
// read model keeps): writes wait for the log's projector too.
func TestAWriteIsInTheLogAsSoonAsItIsAnswered(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	for i := range 5 {
		r := h.Do("POST", "/feeds/news", map[string]any{"name": "Read back " + strconv.Itoa(i), "description": "d"})
		id := wantDataObject(t, r, http.StatusCreated)["id"].(string)
		found := false
		for _, e := range readLogOver(t, h, h.Key, url.Values{"feedId": {id}}, 1000) {
			found = found || e["type"] == "NewsFeedCreated"
		}
		if !found {
			t.Fatalf("feed %s, answered 201, is not in the log read right after", id)
		}
	}
}

func TestLogQueriesAreValidatedWithoutQuotingThem(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	for _, tc := range []struct {
		name, query, field string
	}{
		{"a position without its dash", "after=12345", "after"},
		{"a position with letters", "after=12-x9%3Cscript%3E", "after"},
		{"a position past 63 bits", "after=99999999999999999999-1", "after"},
		{"an unknown type", "type=ArticleDiscovered", "type"},
		{"a type list with an unknown one", "type=FeedbackGiven,Nope%3Cb%3E", "type"},
		{"an empty type", "type=", "type"},
		{"a feed id that is not a UUID", "feedId=feed-1", "feedId"},
		{"a limit of zero", "limit=0", "limit"},
		{"a limit past the most", "limit=1001", "limit"},
	} {
		t.Run(tc.name+" answers 400 naming "+tc.field, func(t *testing.T) {
			for _, path := range []string{"/log?", "/log/stream?"} {
				r := c.do(t, "GET", path+tc.query, nil)
				wantValidation(t, r, tc.field)
				for _, bad := range []string{"script", "Nope", "feed-1", "12345", "99999999999999999999"} {
					if strings.Contains(r.Raw, bad) {
						t.Fatalf("%s: the answer quotes the request: %s", path, r.Raw)
					}
				}
			}
		})
	}
	t.Run("a Last-Event-ID that is not a position answers 400 naming it", func(t *testing.T) {
		wantValidation(t, c.doWith(t, "GET", "/log/stream", nil, map[string]string{"Last-Event-ID": "abc"}), "Last-Event-ID")
	})
	t.Run("a key without the log scope is refused on both routes", func(t *testing.T) {
		k := as(h, h.NewKey("acme", auth.ScopeItems, auth.ScopeNews, auth.ScopeEvents, auth.ScopeWebhooks))
		wantForbidden(t, k.do(t, "GET", "/log", nil))
		wantForbidden(t, k.do(t, "GET", "/log/stream", nil))
		wantForbidden(t, k.do(t, "GET", "/log/extracts/feedback?format=csv", nil))
		wantForbidden(t, k.do(t, "GET", "/log/extracts/items?format=parquet", nil))
	})
}

// logStreamServer is a served harness whose stopping stops its server, as
// SIGTERM does to feedsvc serve, with streams quick to observe and a long
// keep-alive, so that only the shutdown ends a stream within the test.
func logStreamServer(t *testing.T) (*servicetest.Harness, string) {
	h := servicetest.Start(t, fastStreams, func(c *config.Config) {
		c.Roles[config.RoleAPI] = true
		c.StreamKeepAlive = time.Minute
	})
	return h, h.Listen()
}

func createFeeds(t *testing.T, h *servicetest.Harness, key string, names ...string) {
	t.Helper()
	for _, n := range names {
		as(h, key).do(t, "POST", "/feeds/news", map[string]string{"name": n, "description": "d"}).MustStatus(t, 201)
	}
}

func TestTheLogStreamResumesAcrossAServerRestartWithNoneLostOrRepeatedAndNoOtherOrganizations(t *testing.T) {
	h, addr := logStreamServer(t)
	globex := h.NewKey("globex")
	s := openStream(t, addr, "/log/stream?after=", h.Key, nil)
	conformsStream(t, "/log/stream?after=", s)
	createFeeds(t, h, h.Key, "one", "two", "three")
	createFeeds(t, h, globex, "theirs")
	// The client has handled one event when the server goes down; what
	// else reached its socket is lost with it.
	first := s.next(10 * time.Second)
	h.Restart()
	select {
	case <-s.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end with its server")
	}
	addr = h.Listen()
	createFeeds(t, h, h.Key, "four", "five")
	createFeeds(t, h, globex, "theirs too")
	r := openStream(t, addr, "/log/stream", h.Key, map[string]string{"Last-Event-ID": first.ID})
	logCaughtUp(t, h)
	want := readLogOver(t, h, h.Key, nil, 1000)
	if len(want) < 5 {
		t.Fatalf("the log holds %d events", len(want))
	}
	got := []sseEvent{first}
	for range len(want) - 1 {
		got = append(got, r.next(10*time.Second))
	}
	r.quiet(300 * time.Millisecond)
	for i, ev := range got {
		var e map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			t.Fatalf("event %d is not JSON: %v", i, err)
		}
		if ev.ID != want[i]["position"] || e["position"] != want[i]["position"] || ev.Event != want[i]["type"] || e["id"] != want[i]["id"] {
			t.Fatalf("event %d is %s %s (%v), the log's is %v %v", i, ev.ID, ev.Event, e["id"], want[i]["position"], want[i]["type"])
		}
		if strings.Contains(ev.Data, "theirs") {
			t.Fatalf("acme's stream carries globex's feed: %s", ev.Data)
		}
	}

	t.Run("as NDJSON from the beginning it sends the same events, one a line", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/log/stream?after=", nil)
		req.Header.Set("Authorization", "Bearer "+h.Key)
		req.Header.Set("Accept", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
			t.Fatalf("status %d, type %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		lines := make(chan string, 100)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if sc.Text() != "" {
					lines <- sc.Text()
				}
			}
		}()
		for i := range want {
			select {
			case line := <-lines:
				var e map[string]any
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("line %d is not JSON: %v", i, err)
				}
				if e["position"] != want[i]["position"] {
					t.Fatalf("line %d at %v, the log's event at %v", i, e["position"], want[i]["position"])
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no line %d within 10 s", i)
			}
		}
	})

	t.Run("without a position the stream starts with what comes next", func(t *testing.T) {
		n := openStream(t, addr, "/log/stream?type=NewsFeedCreated", h.Key, nil)
		n.quiet(300 * time.Millisecond)
		createFeeds(t, h, h.Key, "six")
		ev := n.next(10 * time.Second)
		if ev.Event != "NewsFeedCreated" || !strings.Contains(ev.Data, `"six"`) {
			t.Fatalf("first event %s %s, want the feed created after the stream opened", ev.Event, ev.Data)
		}
	})
}
