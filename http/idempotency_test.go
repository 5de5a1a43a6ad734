package http_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/internal/idempotency"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Contract tests of Idempotency-Key on writes: the first answer is kept 24
// hours per organization and key, replayed without doing the work again,
// in this process, another one, or one started later.

// withKey sends a request as c with an Idempotency-Key.
func (c caller) withKey(t *testing.T, key, method, path string, body any) servicetest.Response {
	t.Helper()
	return c.doWith(t, method, path, body, map[string]string{"Idempotency-Key": key})
}

// wantReplayOf fails unless r repeats first exactly, marked as replayed.
func wantReplayOf(t *testing.T, first, r servicetest.Response) {
	t.Helper()
	if r.Status != first.Status || r.Raw != first.Raw {
		t.Fatalf("replay %d %s; want the first answer %d %s", r.Status, r.Raw, first.Status, first.Raw)
	}
	if r.Header.Get("Idempotent-Replayed") != "true" || r.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("replay headers %v", r.Header)
	}
	if first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the first answer is marked replayed: %v", first.Header)
	}
}

// count counts rows of a table matching a condition.
func count(t *testing.T, h *servicetest.Harness, query string, args ...any) int {
	t.Helper()
	var n int
	if err := h.Service.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM "+query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestARepeatedWriteWithTheSameKeyAnswersTheFirstAnswerWithoutDoingItAgain(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := createFeed(t, c, "Base", "for the writes below")["id"].(string)
	eventFeed := wantDataObject(t, c.do(t, "POST", "/feeds/events", map[string]any{"name": "Events", "description": "x"}), http.StatusCreated)["id"].(string)
	hook := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"event.item_added"}}), http.StatusCreated)["id"].(string)
	cases := []struct {
		name, method, path string
		body               any
		status             int
		// done counts what the write made; it must be the same after the
		// replay as after the first answer.
		done func() int
	}{
		{"creating a news feed", "POST", "/feeds/news", map[string]any{"name": "Once", "description": "only"}, http.StatusCreated,
			func() int { return len(wantDataList(t, c.do(t, "GET", "/feeds/news", nil))) }},
		{"creating an event feed", "POST", "/feeds/events", map[string]any{"name": "Once", "description": "only"}, http.StatusCreated,
			func() int { return len(wantDataList(t, c.do(t, "GET", "/feeds/events", nil))) }},
		{"attaching a site", "POST", "/feeds/news/" + feed + "/sources", site("once.example"), http.StatusCreated,
			func() int { return len(wantDataList(t, c.do(t, "GET", "/feeds/news/"+feed+"/sources", nil))) }},
		{"registering a source record (201 the first time, and in the replay)", "POST", "/sources", map[string]any{"sourceType": "site", "domain": "record.example"}, http.StatusCreated,
			func() int { return len(wantDataList(t, c.do(t, "GET", "/sources", nil))) }},
		{"renaming a feed", "PATCH", "/feeds/news/" + feed, map[string]any{"name": "Renamed"}, http.StatusOK,
			func() int { return count(t, h, "events WHERE event_type = 'NewsFeedRenamed'") }},
		{"creating a webhook (the replay shows the same secret)", "POST", "/webhooks", map[string]any{"url": "http://127.0.0.1:9/other", "events": []string{"event.item_added"}}, http.StatusCreated,
			func() int { return count(t, h, "webhook_secrets") }},
		{"rotating a webhook's secret (the replay shows the same secret)", "POST", "/webhooks/" + hook + "/rotate-secret", nil, http.StatusOK,
			func() int { return count(t, h, "webhook_secrets") }},
		{"deleting an event feed (the replay is the 200, not a 404)", "DELETE", "/feeds/events/" + eventFeed, nil, http.StatusOK,
			func() int { return len(wantDataList(t, c.do(t, "GET", "/feeds/events", nil))) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := uuid.NewString()
			first := c.withKey(t, key, tc.method, tc.path, tc.body).MustStatus(t, tc.status)
			made := tc.done()
			for range 2 {
				wantReplayOf(t, first, c.withKey(t, key, tc.method, tc.path, tc.body))
			}
			if again := tc.done(); again != made {
				t.Fatalf("the replays changed what the write made: %d, then %d", made, again)
			}
		})
	}
	t.Run("without a key the same write is done again", func(t *testing.T) {
		body := map[string]any{"name": "Twice", "description": "no key"}
		a := wantDataObject(t, c.do(t, "POST", "/feeds/news", body), http.StatusCreated)
		b := wantDataObject(t, c.do(t, "POST", "/feeds/news", body), http.StatusCreated)
		if a["id"] == b["id"] {
			t.Fatal("two creates without a key made one feed")
		}
	})
	t.Run("an answer that refused the write is kept too", func(t *testing.T) {
		key := uuid.NewString()
		first := c.withKey(t, key, "POST", "/feeds/news", map[string]any{"name": ""})
		wantValidation(t, first, "description")
		wantReplayOf(t, first, c.withKey(t, key, "POST", "/feeds/news", map[string]any{"name": ""}))
	})
	t.Run("another organization's same key is its own", func(t *testing.T) {
		key := uuid.NewString()
		body := map[string]any{"name": "Shared key", "description": "x"}
		a := c.withKey(t, key, "POST", "/feeds/news", body).MustStatus(t, http.StatusCreated)
		b := as(h, h.NewKey("globex")).withKey(t, key, "POST", "/feeds/news", body).MustStatus(t, http.StatusCreated)
		if b.Header.Get("Idempotent-Replayed") != "" || a.Data()["id"] == b.Data()["id"] {
			t.Fatalf("globex got acme's answer: %s", b.Raw)
		}
	})
	t.Run("another key of the same organization shares its keys", func(t *testing.T) {
		key := uuid.NewString()
		body := map[string]any{"name": "Org-wide", "description": "x"}
		first := c.withKey(t, key, "POST", "/feeds/news", body).MustStatus(t, http.StatusCreated)
		wantReplayOf(t, first, as(h, h.NewKey("acme")).withKey(t, key, "POST", "/feeds/news", body))
	})
	t.Run("a 403 is not kept: another key of the organization with the scope gets the write done", func(t *testing.T) {
		key := uuid.NewString()
		body := map[string]any{"name": "Scoped", "description": "x"}
		wantForbidden(t, as(h, h.NewKey("acme", auth.ScopeItems)).withKey(t, key, "POST", "/feeds/news", body))
		r := c.withKey(t, key, "POST", "/feeds/news", body).MustStatus(t, http.StatusCreated)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("a 403 was replayed as %s", r.Raw)
		}
	})
	t.Run("a read ignores the key", func(t *testing.T) {
		r := c.withKey(t, "read-1", "GET", "/feeds/news", nil).MustStatus(t, http.StatusOK)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("a GET was replayed")
		}
	})
}

func TestTheSameKeyForADifferentRequestAnswers422InTheRoutesDialect(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	key := uuid.NewString()
	first := c.withKey(t, key, "POST", "/feeds/news", `{"name":"A","description":"x"}`).MustStatus(t, http.StatusCreated)
	feed := first.Data()["id"].(string)
	cases := []struct {
		name, method, path, body, code string
	}{
		{"another body", "POST", "/feeds/news", `{"name":"B","description":"x"}`, "VALIDATION_ERROR"},
		{"the same body spelled differently", "POST", "/feeds/news", `{"description":"x","name":"A"}`, "VALIDATION_ERROR"},
		{"another path", "POST", "/feeds/events", `{"name":"A","description":"x"}`, "BAD_REQUEST"},
		{"another method", "PATCH", "/feeds/news/" + feed, `{"name":"A","description":"x"}`, "VALIDATION_ERROR"},
		{"another query", "POST", "/feeds/news?x=1", `{"name":"A","description":"x"}`, "VALIDATION_ERROR"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" answers 422 "+tc.code+" naming the header", func(t *testing.T) {
			r := c.withKey(t, key, tc.method, tc.path, tc.body)
			e := wantError(t, r, http.StatusUnprocessableEntity, tc.code)
			d := wantObject(t, "error.details", e["details"])
			if d["field"] != "Idempotency-Key" || strings.Contains(r.Raw, key) {
				t.Fatalf("422 %s", r.Raw)
			}
		})
	}
	t.Run("the first request still gets its answer", func(t *testing.T) {
		wantReplayOf(t, first, c.withKey(t, key, "POST", "/feeds/news", `{"name":"A","description":"x"}`))
		if n := len(wantDataList(t, c.do(t, "GET", "/feeds/news", nil))); n != 1 {
			t.Fatalf("%d feeds", n)
		}
	})
	t.Run("a malformed key answers 400 and does nothing", func(t *testing.T) {
		for _, bad := range []string{strings.Repeat("k", 256), "two words", "tab\there", "ключ"} {
			wantValidation(t, c.withKey(t, bad, "POST", "/feeds/news", `{"name":"Bad key","description":"x"}`), "Idempotency-Key")
		}
		wantEventBadRequest(t, c.withKey(t, strings.Repeat("k", 256), "POST", "/feeds/events", `{}`), "Idempotency-Key")
		if n := len(wantDataList(t, c.do(t, "GET", "/feeds/news", nil))); n != 1 {
			t.Fatalf("%d feeds after refused keys", n)
		}
	})
}

func TestConcurrentRepeatsOfOneWriteDoItOnceAndTheRunningOneAnswers409(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	t.Run("a repeat while the first run holds the key answers 409 with Retry-After", func(t *testing.T) {
		body := `{"name":"Held","description":"x"}`
		key := uuid.NewString()
		claim, err := h.Service.Idempotency.Begin(context.Background(), organizationOf(t, h), key,
			idempotency.Fingerprint("POST", "/feeds/news", []byte(body)))
		if err != nil || claim.Outcome != idempotency.Run {
			t.Fatalf("claim: %+v, %v", claim, err)
		}
		r := c.withKey(t, key, "POST", "/feeds/news", body)
		e := wantError(t, r, http.StatusConflict, "CONFLICT")
		if d := wantObject(t, "error.details", e["details"]); d["field"] != "Idempotency-Key" || r.Header.Get("Retry-After") != "1" {
			t.Fatalf("409 %s %v", r.Raw, r.Header)
		}
		if n := len(wantDataList(t, c.do(t, "GET", "/feeds/news", nil))); n != 0 {
			t.Fatalf("the 409 created %d feeds", n)
		}
	})
	t.Run("sixteen repeats at once create one feed", func(t *testing.T) {
		key := uuid.NewString()
		body := `{"name":"Raced","description":"x"}`
		answers := make([]servicetest.Response, 16)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = h.DoWith("POST", "/feeds/news", body, map[string]string{"Authorization": "Bearer " + h.Key, "Idempotency-Key": key})
			}()
		}
		wg.Wait()
		var created servicetest.Response
		conflicts := 0
		for _, r := range answers {
			switch r.Status {
			case http.StatusCreated:
				if created.Raw != "" && r.Raw != created.Raw {
					t.Fatalf("two different 201s: %s and %s", created.Raw, r.Raw)
				}
				if r.Header.Get("Idempotent-Replayed") == "" {
					created = r
				}
			case http.StatusConflict:
				conflicts++
			default:
				t.Fatalf("answer %d %s", r.Status, r.Raw)
			}
		}
		raced := 0
		for _, f := range wantDataList(t, c.do(t, "GET", "/feeds/news", nil)) {
			if f["name"] == "Raced" {
				raced++
			}
		}
		if raced != 1 || created.Raw == "" {
			t.Fatalf("%d feeds named Raced, a first 201: %v", raced, created.Raw != "")
		}
		t.Logf("%d of 16 answered 409 while the first ran", conflicts)
		// Once the first run is over, every repeat gets its answer.
		wantReplayOf(t, created, c.withKey(t, key, "POST", "/feeds/news", body))
	})
}

// organizationOf is the organization of the harness's key.
func organizationOf(t *testing.T, h *servicetest.Harness) uuid.UUID {
	t.Helper()
	p, err := h.Service.Keys.Authenticate(context.Background(), h.Key)
	if err != nil {
		t.Fatal(err)
	}
	return p.OrganizationID
}

func TestKeysOutliveTheProcessThatAnswered(t *testing.T) {
	h := servicetest.Start(t)
	key := uuid.NewString()
	body := `{"name":"Before the restart","description":"x"}`
	first := as(h, h.Key).withKey(t, key, "POST", "/feeds/news", body).MustStatus(t, http.StatusCreated)
	h.Stop()
	restarted := h.Another()
	c := as(restarted, h.Key)
	wantReplayOf(t, first, c.withKey(t, key, "POST", "/feeds/news", body))
	wantError(t, c.withKey(t, key, "POST", "/feeds/news", `{"name":"Other","description":"x"}`), http.StatusUnprocessableEntity, "VALIDATION_ERROR")
	if n := len(wantDataList(t, c.do(t, "GET", "/feeds/news", nil))); n != 1 {
		t.Fatalf("%d feeds", n)
	}
}

func TestARepeatAfterA503GetsTheWriteTheFirstRunStoredNotASecondOne(t *testing.T) {
	h := servicetest.Start(t)
	// A second API process whose read models always lag: each of its
	// writes is stored, then answered 503.
	lagging := h.Another(func(c *config.Config) {
		c.ConsistencyTimeout = time.Nanosecond
		c.Roles = map[string]bool{}
	})
	c := as(h, h.Key)
	feed := createFeed(t, c, "Host", "of the attachment")["id"].(string)
	cases := []struct {
		name, path, resource string
		body                 any
		list                 string
	}{
		{"a create", "/feeds/news", "feed", map[string]any{"name": "Lagged", "description": "x"}, "/feeds/news"},
		{"an attach (a source record and an attachment)", "/feeds/news/" + feed + "/sources", "", site("lagged.example"), "/feeds/news/" + feed + "/sources"},
		{"a webhook create (a secret and a subscription)", "/webhooks", "webhook", map[string]any{"url": "http://127.0.0.1:9/lagged", "events": []string{"event.item_added"}}, "/webhooks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := uuid.NewString()
			before := len(wantDataList(t, c.do(t, "GET", tc.list, nil)))
			secrets := count(t, h, "webhook_secrets")
			r := lagging.DoWith("POST", tc.path, tc.body, map[string]string{"Authorization": "Bearer " + h.Key, "Idempotency-Key": key})
			e := wantError(t, r, http.StatusServiceUnavailable, "INTERNAL_ERROR")
			// Repeated on the healthy process: the first run's work, answered.
			repeat := c.withKey(t, key, "POST", tc.path, tc.body)
			done := wantDataObject(t, repeat, http.StatusCreated)
			if tc.resource != "" && (e["resource"] != tc.resource || e["id"] != done["id"]) {
				t.Fatalf("the 503 named %v %v; the repeat made %v", e["resource"], e["id"], done["id"])
			}
			if after := len(wantDataList(t, c.do(t, "GET", tc.list, nil))); after != before+1 {
				t.Fatalf("%d then %d: the repeat did the write again", before, after)
			}
			if tc.resource == "webhook" && count(t, h, "webhook_secrets") != secrets+1 {
				t.Fatalf("the repeat stored another secret")
			}
			wantReplayOf(t, repeat, c.withKey(t, key, "POST", tc.path, tc.body))
		})
	}
}

func TestARepeatAfterTheProcessDiedMidWriteFindsTheStoredEvents(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	ctx := context.Background()
	body := `{"name":"Crashed","description":"mid-write"}`
	key := uuid.NewString()
	// A run that claimed the key, stored the feed's events, and died before
	// it could answer or record its answer.
	dying := idempotency.NewStore(h.Service.DB.Pool)
	dying.Lease = time.Second
	claim, err := dying.Begin(ctx, organizationOf(t, h), key, idempotency.Fingerprint("POST", "/feeds/news", []byte(body)))
	if err != nil || claim.Outcome != idempotency.Run {
		t.Fatalf("claim: %+v, %v", claim, err)
	}
	stored, _, err := h.Service.Commands.Idempotent(claim.Scope).CreateFeed(ctx,
		commands.CreateFeed{Kind: domain.FeedNews, Org: organizationOf(t, h), Name: "Crashed", Description: "mid-write"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("while its lease runs the key is taken", func(t *testing.T) {
		wantError(t, c.withKey(t, key, "POST", "/feeds/news", body), http.StatusConflict, "CONFLICT")
	})
	time.Sleep(1100 * time.Millisecond) // the dead run's one-second lease lapses: a clock, not a condition
	t.Run("after it a repeat answers with the feed the dead run stored", func(t *testing.T) {
		got := wantDataObject(t, c.withKey(t, key, "POST", "/feeds/news", body), http.StatusCreated)
		if got["id"] != stored.ID.String() || got["createdAt"] != timestampOf(stored.CreatedAt) {
			t.Fatalf("answer %v; the dead run stored %s at %v", got, stored.ID, stored.CreatedAt)
		}
		if n := len(wantDataList(t, c.do(t, "GET", "/feeds/news", nil))); n != 1 {
			t.Fatalf("%d feeds", n)
		}
		if n := count(t, h, "events WHERE event_type = 'NewsFeedCreated'"); n != 1 {
			t.Fatalf("%d NewsFeedCreated events", n)
		}
	})
}

func TestAKeyPast24HoursNamesANewRequestAndIsRemoved(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	key := uuid.NewString()
	body := `{"name":"Daily","description":"x"}`
	first := c.withKey(t, key, "POST", "/feeds/news", body).MustStatus(t, http.StatusCreated)
	if _, err := h.Service.DB.Pool.Exec(context.Background(), "UPDATE idempotency_keys SET created_at = created_at - interval '24 hours 1 second'"); err != nil {
		t.Fatal(err)
	}
	again := c.withKey(t, key, "POST", "/feeds/news", body).MustStatus(t, http.StatusCreated)
	if again.Header.Get("Idempotent-Replayed") != "" || again.Data()["id"] == first.Data()["id"] {
		t.Fatalf("a day-old key was replayed: %s", again.Raw)
	}
	if _, err := h.Service.DB.Pool.Exec(context.Background(), "UPDATE idempotency_keys SET created_at = created_at - interval '25 hours'"); err != nil {
		t.Fatal(err)
	}
	n, err := h.Service.Idempotency.Expire(context.Background())
	if err != nil || n != 1 || count(t, h, "idempotency_keys") != 0 {
		t.Fatalf("Expire removed %d, %v; %d left", n, err, count(t, h, "idempotency_keys"))
	}
}
