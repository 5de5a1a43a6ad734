package http_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/docs/webhooks/receiver"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
	"github.com/feedsvc/feedsvc/webhook"
)

// Contract tests of the webhook endpoints (api.md 4.7, 6; D10). Delivery
// itself (retries, restarts, kills) is tested in package webhook.

// hookReceiver is a local endpoint recording what it gets.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []*http.Request
	bodies [][]byte
	status int
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	rc := &hookReceiver{status: status}
	checker, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		// Every delivery, real or a test one, is the documented webhook.
		for _, p := range checker.CheckWebhook("event.item_added", r.Header, b) {
			t.Errorf("OpenAPI: %s", p)
		}
		rc.mu.Lock()
		rc.got, rc.bodies = append(rc.got, r), append(rc.bodies, b)
		rc.mu.Unlock()
		w.WriteHeader(rc.status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func (rc *hookReceiver) last() (*http.Request, []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[len(rc.got)-1], rc.bodies[len(rc.bodies)-1]
}

// orgOfKey is the organization a key belongs to.
func orgOfKey(t *testing.T, h *servicetest.Harness, key string) uuid.UUID {
	t.Helper()
	p, err := h.Service.Keys.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return p.OrganizationID
}

// newEventFeedFor creates an event feed for org through the commands (the event
// feed endpoints are another part of the API).
func newEventFeedFor(t *testing.T, h *servicetest.Harness, org uuid.UUID) string {
	t.Helper()
	ctx := context.Background()
	f, err := commands.Visible(ctx, h.Service.Waiter, func(ctx context.Context) (domain.FeedState, commands.Result, error) {
		return h.Service.Commands.CreateFeed(ctx, commands.CreateFeed{Kind: domain.FeedHappenings, Org: org, Name: "events", Description: "d"})
	})
	if err != nil {
		t.Fatal(err)
	}
	return f.ID.String()
}

// addEventItem records an event and its addition to an event feed, as
// ingestion does.
func addEventItem(t *testing.T, h *servicetest.Harness, org, feed uuid.UUID, title string) {
	t.Helper()
	details, err := domain.NewHappeningDetails(domain.HappeningDetails{
		Identity: "https://example.com/e/" + uuid.NewString(), Title: title,
		Instances: []domain.HappeningInstance{{Key: "1", Status: domain.StatusScheduled, Occurrences: []domain.Occurrence{{Start: time.Now().Add(48 * time.Hour)}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ce domain.Happening
	found := ce.Discover(uuid.New(), details, domain.Now())[0].(domain.HappeningDiscovered)
	var it domain.HappeningItem
	added := it.Add(domain.ItemTarget{FeedID: feed, OrganizationID: org, AttachmentID: uuid.New(), SourceID: uuid.New(), SourceType: domain.SourceSite},
		found.HappeningID, domain.Now())[0]
	for stream, e := range map[string]domain.Event{domain.HappeningStream(found.HappeningID): found, domain.HappeningItemStream(feed, found.HappeningID): added} {
		data, err := domain.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Service.Store.AppendToStream(context.Background(), stream, eventstore.Any(),
			eventstore.EventData{ID: uuid.New(), Type: e.EventType(), Data: data, Metadata: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// deliveredWithin bounds the wait for a webhook delivery.
const deliveredWithin = 15 * time.Second

func wantWebhook(t *testing.T, what string, m map[string]any, withSecret bool) {
	t.Helper()
	keys := []string{"id", "url", "events", "eventFeedIds", "enabled", "enabledSource", "createdAt", "updatedAt"}
	if _, ok := m["enabledReason"]; ok {
		keys = append(keys, "enabledReason")
	}
	if withSecret {
		keys = append(keys, "secret")
	}
	wantKeys(t, what, m, keys...)
	wantUUID(t, what+".id", m["id"])
	wantTimestamp(t, what+".createdAt", m["createdAt"])
	wantTimestamp(t, what+".updatedAt", m["updatedAt"])
}

func TestCreatingAWebhookAnswers201WithASecretShownOnlyThen(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := newEventFeedFor(t, h, orgOfKey(t, h, h.Key))
	r := c.do(t, "POST", "/webhooks", map[string]any{"url": "https://Hooks.Example.com/in", "events": []string{"event.item_added"}, "eventFeedIds": []string{feed}})
	hook := wantDataObject(t, r, http.StatusCreated)
	wantWebhook(t, "created webhook", hook, true)
	secret := wantString(t, "secret", hook["secret"])
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 {
		t.Fatalf("secret %q is not whsec_ and enough randomness", secret)
	}
	if hook["url"] != "https://hooks.example.com/in" || jsonOf(hook["events"]) != `["event.item_added"]` || jsonOf(hook["eventFeedIds"]) != `["`+feed+`"]` {
		t.Fatalf("webhook %s does not echo what was asked", jsonOf(hook))
	}
	if hook["enabled"] != true || hook["enabledSource"] != "api" {
		t.Fatalf("a new webhook is enabled %v by %v", hook["enabled"], hook["enabledSource"])
	}
	id := hook["id"].(string)

	got := c.do(t, "GET", "/webhooks/"+id, nil)
	wantWebhook(t, "fetched webhook", wantDataObject(t, got, http.StatusOK), false)
	list := c.do(t, "GET", "/webhooks", nil)
	if hooks := wantDataList(t, list); len(hooks) != 1 || hooks[0]["id"] != id {
		t.Fatalf("list %s", list.Raw)
	}
	for _, raw := range []string{got.Raw, list.Raw} {
		if strings.Contains(raw, secret) || strings.Contains(raw, "whsec_") {
			t.Fatalf("a read shows the secret: %s", raw)
		}
	}
	t.Run("without eventFeedIds it covers every event feed", func(t *testing.T) {
		all := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/all", "events": []string{"event.item_added"}}), http.StatusCreated)
		if jsonOf(all["eventFeedIds"]) != "[]" {
			t.Fatalf("eventFeedIds %s, want []", jsonOf(all["eventFeedIds"]))
		}
		if hooks := wantDataList(t, c.do(t, "GET", "/webhooks", nil)); len(hooks) != 2 || hooks[0]["id"] != all["id"] {
			t.Fatalf("the list is not newest first: %s", jsonOf(hooks))
		}
	})
}

func TestWebhookBodiesAreValidatedAndARefusedOneStoresNothing(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t, func(c *config.Config) { c.AllowPrivateNetworks = false })
	c := as(h, h.Key)
	other := newEventFeedFor(t, h, orgOfKey(t, h, h.NewKey("other")))
	ok := []string{"event.item_added"}
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"no url", map[string]any{"events": ok}, "url"},
		{"a relative url", map[string]any{"url": "/hook", "events": ok}, "url"},
		{"an ftp url", map[string]any{"url": "ftp://example.com/", "events": ok}, "url"},
		{"credentials in the url", map[string]any{"url": "https://u:p@example.com/", "events": ok}, "url"},
		{"a loopback address", map[string]any{"url": "http://127.0.0.1:9000/", "events": ok}, "url"},
		{"a private address", map[string]any{"url": "http://192.168.1.10/", "events": ok}, "url"},
		{"the metadata address", map[string]any{"url": "http://169.254.169.254/latest", "events": ok}, "url"},
		{"a url that is not a string", map[string]any{"url": 5, "events": ok}, "url"},
		{"a host of 100,000 characters", map[string]any{"url": "https://" + strings.Repeat("a", 100_000) + ".com/", "events": ok}, "url"},
		{"a host label of 64 characters", map[string]any{"url": "https://" + strings.Repeat("a", 64) + ".com/", "events": ok}, "url"},
		{"no events", map[string]any{"url": "https://example.com/"}, "events"},
		{"empty events", map[string]any{"url": "https://example.com/", "events": []string{}}, "events"},
		{"an unknown event", map[string]any{"url": "https://example.com/", "events": []string{"news.item_added"}}, "events"},
		{"feed ids that are not UUIDs", map[string]any{"url": "https://example.com/", "events": ok, "eventFeedIds": []string{"x"}}, "eventFeedIds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantValidation(t, c.do(t, "POST", "/webhooks", tc.body), tc.field)
		})
	}
	t.Run("an event feed the organization does not have answers 404", func(t *testing.T) {
		for _, id := range []string{uuid.NewString(), other} {
			wantNotFound(t, c.do(t, "POST", "/webhooks", map[string]any{"url": "https://example.com/", "events": ok, "eventFeedIds": []string{id}}), "eventFeed", id)
		}
	})
	if hooks := wantDataList(t, c.do(t, "GET", "/webhooks", nil)); len(hooks) != 0 {
		t.Fatalf("refused creates stored %s", jsonOf(hooks))
	}
}

func TestWebhookRoutesNeedTheWebhooksScope(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	id := wantDataObject(t, as(h, h.Key).do(t, "POST", "/webhooks", map[string]any{"url": "https://example.com/h", "events": []string{"event.item_added"}}), http.StatusCreated)["id"].(string)
	key := as(h, h.NewKey("acme", auth.ScopeNews, auth.ScopeEvents, auth.ScopeItems))
	for _, rq := range []struct{ method, path string }{
		{"POST", "/webhooks"}, {"GET", "/webhooks"}, {"POST", "/webhooks/test"}, {"GET", "/webhooks/" + id},
		{"PATCH", "/webhooks/" + id}, {"DELETE", "/webhooks/" + id}, {"POST", "/webhooks/" + id + "/rotate-secret"},
		{"GET", "/webhooks/" + id + "/deliveries"}, {"POST", "/webhooks/" + id + "/deliveries/" + uuid.NewString() + "/redeliver"},
	} {
		wantForbidden(t, key.do(t, rq.method, rq.path, map[string]any{"url": "https://example.com/x", "events": []string{"event.item_added"}}))
	}
	if got := wantDataObject(t, as(h, h.Key).do(t, "GET", "/webhooks/"+id, nil), http.StatusOK); got["url"] != "https://example.com/h" {
		t.Fatalf("a refused request changed the webhook: %s", jsonOf(got))
	}
	wantDataList(t, as(h, h.NewKey("acme", auth.ScopeWebhooks)).do(t, "GET", "/webhooks", nil))
}

func TestAnotherOrganizationsWebhookAnswers404LikeAMissingOne(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	id := wantDataObject(t, as(h, h.Key).do(t, "POST", "/webhooks", map[string]any{"url": "https://example.com/h", "events": []string{"event.item_added"}}), http.StatusCreated)["id"].(string)
	stranger := as(h, h.NewKey("globex"))
	for _, hook := range []string{id, uuid.NewString()} {
		for _, rq := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/webhooks/" + hook, nil},
			{"PATCH", "/webhooks/" + hook, map[string]any{"enabled": false}},
			{"DELETE", "/webhooks/" + hook, nil},
			{"POST", "/webhooks/" + hook + "/rotate-secret", nil},
			{"GET", "/webhooks/" + hook + "/deliveries", nil},
			{"GET", "/webhooks/" + hook + "/deliveries/" + uuid.NewString(), nil},
			{"POST", "/webhooks/" + hook + "/deliveries/" + uuid.NewString() + "/redeliver", nil},
			{"POST", "/webhooks/test", map[string]any{"url": "https://example.com/h", "event": "event.item_added", "webhookId": hook}},
		} {
			wantNotFound(t, stranger.do(t, rq.method, rq.path, rq.body), "webhook", hook)
		}
	}
	if hooks := wantDataList(t, stranger.do(t, "GET", "/webhooks", nil)); len(hooks) != 0 {
		t.Fatalf("another organization lists %s", jsonOf(hooks))
	}
	if got := wantDataObject(t, as(h, h.Key).do(t, "GET", "/webhooks/"+id, nil), http.StatusOK); got["enabled"] != true {
		t.Fatalf("a stranger changed the webhook: %s", jsonOf(got))
	}
	wantValidation(t, stranger.do(t, "GET", "/webhooks/not-a-uuid", nil), "webhookId")
}

func TestAChangeNamingAnotherOrganizationsEventFeedAnswers404AndChangesNothing(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	own := newEventFeedFor(t, h, orgOfKey(t, h, h.Key))
	other := newEventFeedFor(t, h, orgOfKey(t, h, h.NewKey("globex")))
	hook := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": "https://example.com/a", "events": []string{"event.item_added"}, "eventFeedIds": []string{own}}), http.StatusCreated)
	id := hook["id"].(string)
	for _, ids := range [][]string{{other}, {own, other}} {
		wantNotFound(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"eventFeedIds": ids}), "eventFeed", other)
		wantNotFound(t, c.do(t, "POST", "/webhooks", map[string]any{"url": "https://example.com/b", "events": []string{"event.item_added"}, "eventFeedIds": ids}), "eventFeed", other)
	}
	if got := wantDataObject(t, c.do(t, "GET", "/webhooks/"+id, nil), http.StatusOK); jsonOf(got["eventFeedIds"]) != `["`+own+`"]` {
		t.Fatalf("a refused change left %s", jsonOf(got))
	}
	if hooks := wantDataList(t, c.do(t, "GET", "/webhooks", nil)); len(hooks) != 1 {
		t.Fatalf("a refused create stored a webhook: %s", jsonOf(hooks))
	}
}

func TestADeliveryIsFoundOnlyUnderItsOwnWebhook(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	org := orgOfKey(t, h, h.Key)
	feed := newEventFeedFor(t, h, org)
	rc := newHookReceiver(t, http.StatusOK)
	first := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": rc.URL + "/a", "events": []string{"event.item_added"}}), http.StatusCreated)["id"].(string)
	second := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": rc.URL + "/b", "events": []string{"event.item_added"}}), http.StatusCreated)["id"].(string)
	addEventItem(t, h, org, uuid.MustParse(feed), "one")
	var delivery string
	wait.Until(t, deliveredWithin, "the first webhook's delivery", func() bool {
		items := wantDataObject(t, c.do(t, "GET", "/webhooks/"+first+"/deliveries", nil), http.StatusOK)["items"].([]any)
		if len(items) == 1 && items[0].(map[string]any)["status"] != "pending" {
			delivery = items[0].(map[string]any)["id"].(string)
		}
		return delivery != ""
	})
	wantNotFound(t, c.do(t, "GET", "/webhooks/"+second+"/deliveries/"+delivery, nil), "delivery", delivery)
	wantNotFound(t, c.do(t, "POST", "/webhooks/"+second+"/deliveries/"+delivery+"/redeliver", nil), "delivery", delivery)
	wantDataObject(t, c.do(t, "GET", "/webhooks/"+first+"/deliveries/"+delivery, nil), http.StatusOK)
}

func TestAWebhookIsChangedDisabledReEnabledAndDeletedWithItsAnswerAtOnceVisible(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := newEventFeedFor(t, h, orgOfKey(t, h, h.Key))
	hook := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": "https://example.com/a", "events": []string{"event.item_added"}}), http.StatusCreated)
	id := hook["id"].(string)

	changed := wantDataObject(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"url": "https://example.com/b", "eventFeedIds": []string{feed}, "enabled": false}), http.StatusOK)
	wantWebhook(t, "changed webhook", changed, false)
	if changed["url"] != "https://example.com/b" || jsonOf(changed["eventFeedIds"]) != `["`+feed+`"]` || changed["enabled"] != false || changed["enabledSource"] != "api" {
		t.Fatalf("patched webhook %s", jsonOf(changed))
	}
	if got := wantDataObject(t, c.do(t, "GET", "/webhooks/"+id, nil), http.StatusOK); jsonOf(got) != jsonOf(changed) {
		t.Fatalf("get answers %s, patch answered %s", jsonOf(got), jsonOf(changed))
	}
	enabled := wantDataObject(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"enabled": true}), http.StatusOK)
	if enabled["enabled"] != true || enabled["url"] != "https://example.com/b" {
		t.Fatalf("re-enabled webhook %s", jsonOf(enabled))
	}
	t.Run("an invalid change changes nothing", func(t *testing.T) {
		wantValidation(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"url": "nope", "enabled": false}), "url")
		wantValidation(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"events": []string{}}), "events")
		unknown := uuid.NewString() // never one of this organization's feeds
		wantNotFound(t, c.do(t, "PATCH", "/webhooks/"+id, map[string]any{"eventFeedIds": []string{unknown}}), "eventFeed", unknown)
		if got := wantDataObject(t, c.do(t, "GET", "/webhooks/"+id, nil), http.StatusOK); jsonOf(got) != jsonOf(enabled) {
			t.Fatalf("refused patches left %s", jsonOf(got))
		}
	})
	wantDeleted(t, c.do(t, "DELETE", "/webhooks/"+id, nil))
	wantNotFound(t, c.do(t, "GET", "/webhooks/"+id, nil), "webhook", id)
	wantNotFound(t, c.do(t, "DELETE", "/webhooks/"+id, nil), "webhook", id)
	if hooks := wantDataList(t, c.do(t, "GET", "/webhooks", nil)); len(hooks) != 0 {
		t.Fatalf("a deleted webhook is listed: %s", jsonOf(hooks))
	}
}

func TestRotatingASecretAnswersTheNewOneAndTheOldOnesGrace(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	rc := newHookReceiver(t, http.StatusOK)
	hook := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": rc.URL + "/in", "events": []string{"event.item_added"}}), http.StatusCreated)
	id, old := hook["id"].(string), hook["secret"].(string)

	rotated := wantDataObject(t, c.do(t, "POST", "/webhooks/"+id+"/rotate-secret", nil), http.StatusOK)
	wantKeys(t, "rotation", rotated, "id", "secret", "previousSecretValidUntil")
	secret := wantString(t, "secret", rotated["secret"])
	if secret == old || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("rotation answered secret %q (old %q)", secret, old)
	}
	until, err := time.Parse("2006-01-02T15:04:05.000Z", wantString(t, "previousSecretValidUntil", rotated["previousSecretValidUntil"]))
	if d := time.Until(until); err != nil || d < 23*time.Hour || d > 25*time.Hour {
		t.Fatalf("the old secret stays valid until %v, want 24 hours from now", until)
	}
	// The test endpoint signs with the webhook's secrets: both, new first.
	res := wantDataObject(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL + "/in", "event": "event.item_added", "webhookId": id}), http.StatusOK)
	if res["delivered"] != true {
		t.Fatalf("test delivery %s", jsonOf(res))
	}
	req, body := rc.last()
	sigs := strings.Fields(req.Header.Get(webhook.HeaderSignature))
	ts := req.Header.Get(webhook.HeaderTimestamp)
	if len(sigs) != 2 || receiver.Verify(secret, sigs[0], ts, body, time.Now()) != nil || receiver.Verify(old, sigs[1], ts, body, time.Now()) != nil {
		t.Fatalf("signature header %q is not the new secret's then the old one's", req.Header.Get(webhook.HeaderSignature))
	}
}

func TestTheTestEndpointSendsOneSignedSampleAndSaysWhatHappened(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	rc := newHookReceiver(t, http.StatusOK)

	t.Run("to a url of no webhook, signed with a fresh secret it returns", func(t *testing.T) {
		res := wantDataObject(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL + "/fresh", "event": "event.item_added"}), http.StatusOK)
		wantKeys(t, "test result", res, "delivered", "statusCode", "durationMs", "secret")
		if res["delivered"] != true || res["statusCode"] != 200.0 {
			t.Fatalf("result %s", jsonOf(res))
		}
		req, body := rc.last()
		if receiver.Verify(res["secret"].(string), req.Header.Get(webhook.HeaderSignature), req.Header.Get(webhook.HeaderTimestamp), body, time.Now()) != nil {
			t.Fatal("the returned secret does not verify the sample")
		}
		sample := wantObject(t, "sample", decodeJSON(t, body))
		if sample["event"] != "event.item_added" {
			t.Fatalf("sample %s", body)
		}
		data := wantObject(t, "sample.data", sample["data"])
		wantUUID(t, "sample.data.id", data["id"])
		wantUUID(t, req.Header.Get(webhook.HeaderEventID), req.Header.Get(webhook.HeaderEventID))
	})
	t.Run("to the url of a webhook, signed with its secret", func(t *testing.T) {
		hook := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": rc.URL + "/hook", "events": []string{"event.item_added"}}), http.StatusCreated)
		res := wantDataObject(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL + "/hook", "event": "event.item_added"}), http.StatusOK)
		if _, ok := res["secret"]; ok || res["delivered"] != true {
			t.Fatalf("result %s; the webhook's secret signs, none is returned", jsonOf(res))
		}
		req, body := rc.last()
		if req.Header.Get(webhook.HeaderWebhookID) != hook["id"] ||
			receiver.Verify(hook["secret"].(string), req.Header.Get(webhook.HeaderSignature), req.Header.Get(webhook.HeaderTimestamp), body, time.Now()) != nil {
			t.Fatal("the sample is not signed with the webhook's secret")
		}
	})
	t.Run("a failing endpoint is reported, not an error", func(t *testing.T) {
		bad := newHookReceiver(t, http.StatusTeapot)
		res := wantDataObject(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": bad.URL, "event": "event.item_added"}), http.StatusOK)
		if res["delivered"] != false || res["statusCode"] != 418.0 || !strings.Contains(res["error"].(string), "418") {
			t.Fatalf("result %s", jsonOf(res))
		}
		down := freeLoopback(t)
		res = wantDataObject(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": "http://" + down + "/", "event": "event.item_added"}), http.StatusOK)
		if res["delivered"] != false || res["statusCode"] != nil || res["error"] != "connection refused" {
			t.Fatalf("result %s", jsonOf(res))
		}
	})
	t.Run("bad bodies answer 400", func(t *testing.T) {
		wantValidation(t, c.do(t, "POST", "/webhooks/test", map[string]any{"event": "event.item_added"}), "url")
		wantValidation(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL}), "event")
		wantValidation(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL, "event": "item.deleted"}), "event")
		wantValidation(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL, "event": "event.item_added", "webhookId": "7"}), "webhookId")
	})
}

func TestTheTestEndpointNeverSignsWithAnotherOrganizationsSecret(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	rc := newHookReceiver(t, http.StatusOK)
	theirs := wantDataObject(t, as(h, h.Key).do(t, "POST", "/webhooks", map[string]any{"url": rc.URL + "/in", "events": []string{"event.item_added"}}), http.StatusCreated)
	res := wantDataObject(t, as(h, h.NewKey("globex")).do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL + "/in", "event": "event.item_added"}), http.StatusOK)
	fresh, ok := res["secret"].(string)
	if res["delivered"] != true || !ok {
		t.Fatalf("result %s; a url of no webhook of the caller is signed with a fresh secret", jsonOf(res))
	}
	req, body := rc.last()
	sig, ts := req.Header.Get(webhook.HeaderSignature), req.Header.Get(webhook.HeaderTimestamp)
	if receiver.Verify(theirs["secret"].(string), sig, ts, body, time.Now()) == nil || req.Header.Get(webhook.HeaderWebhookID) == theirs["id"] {
		t.Fatal("the sample was signed as another organization's webhook")
	}
	if receiver.Verify(fresh, sig, ts, body, time.Now()) != nil {
		t.Fatal("the returned secret does not verify the sample")
	}
}

func TestTheTestEndpointDoesNotFollowARedirect(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	target := newHookReceiver(t, http.StatusOK)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	res := wantDataObject(t, as(h, h.Key).do(t, "POST", "/webhooks/test", map[string]any{"url": redirect.URL, "event": "event.item_added"}), http.StatusOK)
	if res["delivered"] != false || res["statusCode"] != 307.0 || !strings.Contains(res["error"].(string), "redirect") {
		t.Fatalf("result %s", jsonOf(res))
	}
	if target.count() != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestTheTestEndpointNeverReachesAPrivateAddressUnlessAllowed(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t, func(c *config.Config) { c.AllowPrivateNetworks = false })
	c := as(h, h.Key)
	rc := newHookReceiver(t, http.StatusOK)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rc.URL, "http://"))
	wantValidation(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL, "event": "event.item_added"}), "url")
	res := wantDataObject(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": "http://localhost:" + port + "/", "event": "event.item_added"}), http.StatusOK)
	if res["delivered"] != false || !strings.Contains(res["error"].(string), "non-public") {
		t.Fatalf("result %s", jsonOf(res))
	}
	if rc.count() != 0 {
		t.Fatal("the loopback receiver was reached")
	}
}

func TestDeliveriesAreListedPagedWithTheirAttemptsAndCanBeRedelivered(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	org := orgOfKey(t, h, h.Key)
	feed := newEventFeedFor(t, h, org)
	rc := newHookReceiver(t, http.StatusOK)
	hook := wantDataObject(t, c.do(t, "POST", "/webhooks", map[string]any{"url": rc.URL, "events": []string{"event.item_added"}}), http.StatusCreated)
	id := hook["id"].(string)
	for _, title := range []string{"one", "two", "three"} {
		addEventItem(t, h, org, uuid.MustParse(feed), title)
	}
	wait.Until(t, deliveredWithin, "three deliveries", func() bool { return rc.count() == 3 })
	var page []map[string]any
	wait.Until(t, deliveredWithin, "three delivered deliveries", func() bool {
		r := c.do(t, "GET", "/webhooks/"+id+"/deliveries", nil)
		list := wantDataObject(t, r, http.StatusOK)
		page = nil
		for _, v := range list["items"].([]any) {
			if d := v.(map[string]any); d["status"] == "delivered" {
				page = append(page, d)
			}
		}
		return len(page) == 3
	})
	d := page[0]
	wantKeys(t, "delivery", d, "id", "webhookId", "eventId", "event", "eventFeedId", "itemId", "status", "createdAt", "updatedAt", "attempts")
	if d["webhookId"] != id || d["eventFeedId"] != feed || d["event"] != "event.item_added" {
		t.Fatalf("delivery %s", jsonOf(d))
	}
	attempts := d["attempts"].([]any)
	if len(attempts) != 1 {
		t.Fatalf("attempts %s", jsonOf(attempts))
	}
	a := wantObject(t, "attempt", attempts[0])
	wantKeys(t, "attempt", a, "run", "at", "statusCode", "durationMs")
	wantTimestamp(t, "attempt.at", a["at"])

	r := c.do(t, "GET", "/webhooks/"+id+"/deliveries?limit=2", nil)
	first := wantDataObject(t, r, http.StatusOK)
	if first["total"] != 3.0 || len(first["items"].([]any)) != 2 || jsonOf(first["pagination"]) != `{"hasMore":true,"limit":2,"offset":0}` {
		t.Fatalf("first page %s", r.Raw)
	}
	second := wantDataObject(t, c.do(t, "GET", "/webhooks/"+id+"/deliveries?limit=2&offset=2", nil), http.StatusOK)
	if len(second["items"].([]any)) != 1 || second["pagination"].(map[string]any)["hasMore"] != false {
		t.Fatalf("second page %s", jsonOf(second))
	}
	wantValidation(t, c.do(t, "GET", "/webhooks/"+id+"/deliveries?limit=101", nil), "limit")

	deliveryID := d["id"].(string)
	again := wantDataObject(t, c.do(t, "POST", "/webhooks/"+id+"/deliveries/"+deliveryID+"/redeliver", nil), http.StatusAccepted)
	if again["id"] != deliveryID || again["status"] != "pending" {
		t.Fatalf("redeliver answered %s", jsonOf(again))
	}
	wait.Until(t, deliveredWithin, "the redelivery", func() bool { return rc.count() == 4 })
	wait.Until(t, deliveredWithin, "the redelivery's attempt in the log", func() bool {
		got := wantDataObject(t, c.do(t, "GET", "/webhooks/"+id+"/deliveries/"+deliveryID, nil), http.StatusOK)
		return got["status"] == "delivered" && len(got["attempts"].([]any)) == 2
	})
	wantNotFound(t, c.do(t, "POST", "/webhooks/"+id+"/deliveries/"+id+"/redeliver", nil), "delivery", id)
	wantValidation(t, c.do(t, "POST", "/webhooks/"+id+"/deliveries/x/redeliver", nil), "deliveryId")
}

func TestWebhookMetricsAreServed(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	rc := newHookReceiver(t, http.StatusOK)
	c := as(h, h.Key)
	wantDataObject(t, c.do(t, "POST", "/webhooks/test", map[string]any{"url": rc.URL, "event": "event.item_added"}), http.StatusOK)
	resp, err := h.Test(httptest.NewRequest("GET", "/metrics", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, name := range []string{"feedsvc_webhook_queue_depth 0", "feedsvc_webhook_oldest_pending_age_seconds 0",
		`feedsvc_webhook_attempts_total{kind="test",outcome="success"} 1`} {
		if !strings.Contains(string(raw), name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%q is not JSON: %v", b, err)
	}
	return v
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
