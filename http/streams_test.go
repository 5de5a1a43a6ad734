package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// sseEvent is one block of a stream: an event (id, event, data), a
// comment, or a retry hint.
type sseEvent struct {
	ID, Event, Data string
	Comment         string
	Retry           string
}

// sseStream is an open stream read by a goroutine, as an EventSource
// would read it.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
	// ended is closed when the answer's body ends (server gone or done).
	ended  chan struct{}
	cancel context.CancelFunc
	raw    strings.Builder
}

// fastStreams makes streams quick to observe: keep-alives every 200 ms,
// the feeds polled every 50 ms.
func fastStreams(c *config.Config) {
	c.StreamKeepAlive = 200 * time.Millisecond
	c.StreamPoll = 50 * time.Millisecond
}

// documentedClient is a client whose exchanges are held to the OpenAPI
// document (a stream's by its head), as the harness's are.
func documentedClient(t *testing.T) *http.Client {
	return &http.Client{Transport: &openapitest.Transport{Base: http.DefaultTransport, Report: t.Errorf}}
}

// openStream opens path on addr with key and headers (Last-Event-ID);
// the stream is closed when the test ends.
func openStream(t *testing.T, addr, path, key string, headers map[string]string) *sseStream {
	t.Helper()
	s, status, body := tryStream(t, addr, path, key, headers)
	if s == nil {
		t.Fatalf("open %s: status %d: %s", path, status, body)
	}
	return s
}

// tryStream opens path as openStream does; when the answer is not 200, it
// returns no stream but the answer's status and body.
func tryStream(t *testing.T, addr, path, key string, headers map[string]string) (*sseStream, int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := documentedClient(t).Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode, string(body)
	}
	s := &sseStream{t: t, resp: resp, events: make(chan sseEvent, 1000), ended: make(chan struct{}), cancel: cancel}
	t.Cleanup(s.close)
	go s.read()
	return s, resp.StatusCode, ""
}

func (s *sseStream) read() {
	defer close(s.ended)
	r := bufio.NewReader(s.resp.Body)
	var ev sseEvent
	var seen bool
	for {
		line, err := r.ReadString('\n')
		s.raw.WriteString(line)
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if seen {
				s.events <- ev
			}
			ev, seen = sseEvent{}, false
			continue
		}
		seen = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			ev.Comment = value
		case "id":
			ev.ID = value
		case "event":
			ev.Event = value
		case "data":
			ev.Data = value
		case "retry":
			ev.Retry = value
		}
	}
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next is the next event with data (comments and hints skipped).
func (s *sseStream) next(within time.Duration) sseEvent {
	s.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev := <-s.events:
			if ev.Data != "" {
				return ev
			}
		case <-s.ended:
			// Events read before the end are still in the channel.
			select {
			case ev := <-s.events:
				if ev.Data != "" {
					return ev
				}
				continue
			default:
			}
			s.t.Fatalf("the stream ended while an event was awaited")
		case <-deadline:
			s.t.Fatalf("no event within %s", within)
		}
	}
}

// quiet fails when an event with data comes within d.
func (s *sseStream) quiet(d time.Duration) {
	s.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-s.events:
			if ev.Data != "" {
				s.t.Fatalf("unexpected event %+v", ev)
			}
		case <-deadline:
			return
		}
	}
}

// itemID is the id in an event's data.
func (ev sseEvent) itemID(t *testing.T) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
		t.Fatalf("event data is not JSON: %v", err)
	}
	id, _ := m["id"].(string)
	return id
}

// conformsStream holds a stream's answer (its head and what came of its
// body) to the OpenAPI document.
func conformsStream(t *testing.T, path string, s *sseStream) {
	t.Helper()
	checker, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checker.Check(openapitest.Exchange{Method: "GET", Target: path, Header: http.Header{"Authorization": {"Bearer x"}},
		Status: s.resp.StatusCode, ResponseHeader: s.resp.Header, ResponseBody: []byte("retry: 3000\n\n")}) {
		t.Errorf("OpenAPI: %s", p)
	}
}

// streamFixture is a news feed of acme on a served harness.
type streamFixture struct {
	*itemFixture
	addr string
	att  map[string]any
}

func newStreamFixture(t *testing.T, opts ...servicetest.Option) *streamFixture {
	t.Helper()
	h := servicetest.Start(t, append([]servicetest.Option{fastStreams}, opts...)...)
	feed := h.Do("POST", "/feeds/news", map[string]string{"name": "live", "description": "d"}).MustStatus(t, 201).Data()
	att := h.Do("POST", "/feeds/news/"+feed["id"].(string)+"/sources", map[string]string{"sourceType": "site", "domain": "news.example"}).MustStatus(t, 201).Data()
	return &streamFixture{itemFixture: &itemFixture{h: h, feedID: feed["id"].(string)}, addr: h.Listen(), att: att}
}

func (f *streamFixture) stream() string { return "/feeds/news/" + f.feedID + "/items/stream" }

func (f *streamFixture) addN(t *testing.T, from, n int) []string {
	t.Helper()
	var ids []string
	for i := from; i < from+n; i++ {
		ids = append(ids, f.add(t, f.att, full(i)))
	}
	return ids
}

// ids are the item ids of events.
func ids(t *testing.T, events []sseEvent) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.itemID(t)
	}
	return out
}

func TestANewsItemIsSentOnTheStreamAsTheListShowsIt(t *testing.T) {
	f := newStreamFixture(t)
	before := f.addN(t, 0, 1)
	for _, c := range []struct {
		name, query string
		source      bool
	}{
		{"without include", "", false},
		{"with include=source", "?include=source", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStream(t, f.addr, f.stream()+c.query, f.h.Key, nil)
			if got := s.resp.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/event-stream") {
				t.Errorf("Content-Type = %q", got)
			}
			if s.resp.Header.Get("Cache-Control") != "no-cache" || s.resp.Header.Get("X-Accel-Buffering") != "no" {
				t.Errorf("Cache-Control %q, X-Accel-Buffering %q", s.resp.Header.Get("Cache-Control"), s.resp.Header.Get("X-Accel-Buffering"))
			}
			conformsStream(t, f.stream()+c.query, s)
			// Without Last-Event-ID the stream starts now: the item already
			// there is not sent.
			s.quiet(300 * time.Millisecond)
			id := f.add(t, f.att, full(len(before)+10))
			before = append(before, id)
			ev := s.next(5 * time.Second)
			if ev.Event != "item" || ev.itemID(t) != id {
				t.Fatalf("event %+v, want item %s", ev, id)
			}
			// The data is the item as the list shows it, and the id the
			// list's cursor at that item: a page after the previous item's
			// cursor holds exactly it.
			list := f.h.Do("GET", "/feeds/news/"+f.feedID+"/items?limit=1"+strings.Replace(c.query, "?", "&", 1), nil).MustStatus(t, 200).Data()
			item, _ := json.Marshal(list["items"].([]any)[0])
			if string(item) != canonical(t, ev.Data) {
				t.Errorf("event data\n%s\nlist item\n%s", ev.Data, item)
			}
			if _, ok := list["items"].([]any)[0].(map[string]any)["source"]; ok != c.source {
				t.Errorf("source block present = %v, want %v", ok, c.source)
			}
			after := f.h.Do("GET", "/feeds/news/"+f.feedID+"/items?cursor="+ev.ID, nil).MustStatus(t, 200).Data()
			if n := len(after["items"].([]any)); n != 0 {
				t.Errorf("the list after the event's id has %d items, want 0", n)
			}
		})
	}
}

// canonical re-encodes JSON as encoding/json orders it.
func canonical(t *testing.T, raw string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAClientThatResumesWithLastEventIDMissesNothingAndSeesNothingTwice(t *testing.T) {
	f := newStreamFixture(t)
	org := f.orgOf(t)
	s := openStream(t, f.addr, f.stream(), f.h.Key, nil)
	want := f.addN(t, 0, 3)
	var got []sseEvent
	for range 2 {
		got = append(got, s.next(5*time.Second))
	}
	s.close()
	// While the client is away: more items, one of them backfilled (dated
	// an hour ago, so the list, newest first, puts it last): the stream
	// follows the log, not the list's date order.
	want = append(want, f.addN(t, 3, 1)...)
	want = append(want, f.addDated(t, org, "https://news.example/backfilled", time.Now().Add(-time.Hour)))
	want = append(want, f.addN(t, 4, 1)...)
	for _, c := range []struct {
		name    string
		path    string
		headers map[string]string
	}{
		{"in the Last-Event-ID header", f.stream(), map[string]string{"Last-Event-ID": got[1].ID}},
		{"in the lastEventId parameter", f.stream() + "?lastEventId=" + got[1].ID, nil},
		// An EventSource reconnects to the address it opened, with the
		// header: the header wins.
		{"in both, the header winning", f.stream() + "?lastEventId=" + got[0].ID, map[string]string{"Last-Event-ID": got[1].ID}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := openStream(t, f.addr, c.path, f.h.Key, c.headers)
			resumed := append([]sseEvent{}, got...)
			for range len(want) - 2 {
				resumed = append(resumed, r.next(5*time.Second))
			}
			r.quiet(300 * time.Millisecond)
			if g := ids(t, resumed); strings.Join(g, ",") != strings.Join(want, ",") {
				t.Fatalf("items received\n%v\nwant, in log order\n%v", g, want)
			}
		})
	}
}

// addDated appends a NewsItemAdded dated at, as a crawl that found an
// article and stored it late would, and waits for its projection.
func (f *streamFixture) addDated(t *testing.T, org uuid.UUID, url string, at time.Time) string {
	t.Helper()
	page, item := uuid.New(), uuid.New()
	feed := uuid.MustParse(f.feedID)
	data, err := domain.EncodeEvent(domain.NewsItemAdded{
		ItemID: item, FeedID: feed, OrganizationID: org,
		AttachmentID: uuid.MustParse(f.att["id"].(string)), SourceID: uuid.MustParse(f.att["sourceId"].(string)), SourceType: domain.SourceSite,
		NewsPageID: page, VersionID: uuid.New(), Content: domain.ArticleContent{URL: url, Title: url}, At: at.UTC(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.h.Service.DB.Pool.Exec(ctx, insertItemEvent[:strings.Index(insertItemEvent, " RETURNING")], domain.NewsItemStream(feed, page), uuid.New(), data); err != nil {
		t.Fatal(err)
	}
	(&orderFixture{itemFixture: f.itemFixture}).caughtUp(t)
	return item.String()
}

func TestAStreamResumesAcrossAServerRestartWithoutLossOrDuplicates(t *testing.T) {
	// With the api role, stopping the service stops its server, as
	// SIGTERM does to feedsvc serve.
	// The keep-alive is long, so that only the shutdown can end the stream
	// within the test's bound.
	f := newStreamFixture(t, func(c *config.Config) {
		c.Roles[config.RoleAPI] = true
		c.StreamKeepAlive = time.Minute
	})
	s := openStream(t, f.addr, f.stream(), f.h.Key, nil)
	want := f.addN(t, 0, 3)
	// The client has handled one event when the server goes down; what
	// else reached its socket is lost with it.
	first := s.next(5 * time.Second)
	start := time.Now()
	f.h.Restart()
	// Shutting down ends open streams rather than wait for them.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the restart took %s with a stream open", d)
	}
	select {
	case <-s.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end with its server")
	}
	addr := f.h.Listen()
	want = append(want, f.addN(t, 3, 2)...)
	r := openStream(t, addr, f.stream(), f.h.Key, map[string]string{"Last-Event-ID": first.ID})
	got := []sseEvent{first}
	for range len(want) - 1 {
		got = append(got, r.next(5*time.Second))
	}
	r.quiet(300 * time.Millisecond)
	if g := ids(t, got); strings.Join(g, ",") != strings.Join(want, ",") {
		t.Fatalf("items received\n%v\nwant\n%v", g, want)
	}
}

func TestAQuietStreamSendsKeepAliveComments(t *testing.T) {
	f := newStreamFixture(t)
	s := openStream(t, f.addr, f.stream(), f.h.Key, nil)
	deadline := time.After(3 * time.Second)
	var retry bool
	for {
		select {
		case ev := <-s.events:
			if ev.Retry == "3000" {
				retry = true
			}
			if ev.Comment == "keep-alive" {
				if !retry {
					t.Error("no retry hint before the first keep-alive")
				}
				return
			}
		case <-deadline:
			t.Fatalf("no keep-alive within 3 s (keep-alive interval 200 ms); got %q", s.raw.String())
		}
	}
}

func TestAKeyPastItsStreamLimitIsAnswered429(t *testing.T) {
	f := newStreamFixture(t, func(c *config.Config) { c.StreamsPerKey = 2 })
	first := openStream(t, f.addr, f.stream(), f.h.Key, nil)
	openStream(t, f.addr, "/feeds/events/"+newEventFeed(t, f.h, "e").id.String()+"/items/stream", f.h.Key, nil)
	// The refusal is held to the document (through the in-memory
	// transport, which shares the process's slots).
	r := f.h.DoWith("GET", f.stream(), nil, map[string]string{"Authorization": "Bearer " + f.h.Key})
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("third stream of a key: status %d, want 429: %s", r.Status, r.Raw)
	}
	if e, _ := r.Body["error"].(map[string]any); e["code"] != "TOO_MANY_REQUESTS" {
		t.Errorf("error %v, want TOO_MANY_REQUESTS", e)
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	status := func(key string) int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+f.addr+f.stream(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := documentedClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(f.h.Key); got != http.StatusTooManyRequests {
		t.Fatalf("third stream of a key over the socket: status %d, want 429", got)
	}
	// The bound is the key's: another key of the organization may stream.
	openStream(t, f.addr, f.stream(), f.h.NewKey("acme"), nil)
	// A stream that ends frees its slot (at once: its connection closed).
	first.close()
	wait.Until(t, 5*time.Second, "the slot of the closed stream to be freed", func() bool {
		return status(f.h.Key) != http.StatusTooManyRequests
	})
}

// Issue 34.2: a key at its bound of five streams closed one and was
// answered 429 for 45 s: the slot came back only when a write failed,
// three keep-alives after the close. The close itself frees it, however
// long the keep-alive: a client that reconnects at once gets its stream.
func TestAClosedStreamFreesItsSlotAtOnce(t *testing.T) {
	f := newStreamFixture(t, func(c *config.Config) {
		c.StreamsPerKey = 5
		c.StreamKeepAlive = time.Hour
	})
	var open []*sseStream
	for range 5 {
		open = append(open, openStream(t, f.addr, f.stream(), f.h.Key, nil))
	}
	sixth := func() int {
		_, got, _ := tryStream(t, f.addr, f.stream(), f.h.Key, nil)
		return got
	}
	if got := sixth(); got != http.StatusTooManyRequests {
		t.Fatalf("a sixth stream: status %d, want 429", got)
	}
	for i, s := range open[:3] {
		s.close()
		// The release follows the close as closely as the server reads
		// the connection's end; retried for a moment, never for a
		// keep-alive (an hour here).
		if !wait.Within(2*time.Second, func() bool {
			reopened, got, body := tryStream(t, f.addr, f.stream(), f.h.Key, nil)
			if reopened == nil && got != http.StatusTooManyRequests {
				t.Fatalf("close %d: reopening answered %d: %s", i, got, body)
			}
			if reopened != nil {
				open[i] = reopened
			}
			return reopened != nil
		}) {
			t.Fatalf("close %d: the slot of the closed stream was still held 2 s after", i)
		}
	}
	if got := sixth(); got != http.StatusTooManyRequests {
		t.Fatalf("the key holds five streams again; another answered %d, want 429", got)
	}
}

func TestAStreamAnswersLikeTheItemList(t *testing.T) {
	f := newStreamFixture(t)
	events := newEventFeed(t, f.h, "events")
	other := newEventFeed(t, f.h, "other events")
	otherOrg := f.h.NewKey("globex")
	itemsOnly := f.h.NewKey("acme", "items")
	newsOnly := f.h.NewKey("acme", "news")
	news := f.stream()
	eventStream := "/feeds/events/" + events.id.String() + "/items/stream"
	// A cursor of another feed, well formed.
	foreign := f.h.Do("GET", "/feeds/events/"+other.id.String()+"/items?cursor=", nil).MustStatus(t, 200).Data()["pagination"].(map[string]any)["nextCursor"].(string)
	bad := "AAAA<script>not-a-cursor"
	for _, c := range []struct {
		name, path, key string
		headers         map[string]string
		status          int
		code, field     string
	}{
		{"another organization's news feed is not found", news, otherOrg, nil, 404, "NOT_FOUND", ""},
		{"another organization's event feed is not found", eventStream, otherOrg, nil, 404, "NOT_FOUND", ""},
		{"a missing feed is not found", "/feeds/news/" + uuid.NewString() + "/items/stream", f.h.Key, nil, 404, "NOT_FOUND", ""},
		{"a key without the items scope is refused", news, newsOnly, nil, 403, "PERMISSION_DENIED", ""},
		{"an unknown include is refused", news + "?include=everything", itemsOnly, nil, 400, "VALIDATION_ERROR", "include"},
		{"a malformed Last-Event-ID is refused", news, itemsOnly, map[string]string{"Last-Event-ID": bad}, 400, "VALIDATION_ERROR", "Last-Event-ID"},
		{"a malformed lastEventId is refused", news + "?lastEventId=" + strings.ReplaceAll(bad, "<", "%3C"), itemsOnly, nil, 400, "VALIDATION_ERROR", "lastEventId"},
		{"another feed's event id is refused", eventStream, itemsOnly, map[string]string{"Last-Event-ID": foreign}, 400, "BAD_REQUEST", "Last-Event-ID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			headers := map[string]string{"Authorization": "Bearer " + c.key}
			for k, v := range c.headers {
				headers[k] = v
			}
			r := f.h.DoWith("GET", c.path, nil, headers)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Raw)
			}
			e, _ := r.Body["error"].(map[string]any)
			if e["code"] != c.code {
				t.Errorf("code %v, want %s", e["code"], c.code)
			}
			if c.field != "" {
				if d, _ := e["details"].(map[string]any); d["field"] != c.field {
					t.Errorf("field %v, want %s", d["field"], c.field)
				}
			}
			if strings.Contains(r.Raw, "script") || strings.Contains(r.Raw, foreign) {
				t.Errorf("the answer quotes the request: %s", r.Raw)
			}
		})
	}
}

func TestAnEventFeedStreamSendsAddedAndRemovedItems(t *testing.T) {
	f := newStreamFixture(t)
	feed := newEventFeed(t, f.h, "live events")
	att := feed.attach(t, "site.example")
	path := "/feeds/events/" + feed.id.String() + "/items/stream?include=source"
	s := openStream(t, f.addr, path, f.h.Key, nil)
	conformsStream(t, path, s)
	start := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
	item := feed.add(t, att, oneTime("concert", start, 2*time.Hour))
	ev := s.next(5 * time.Second)
	if ev.Event != "item" || ev.itemID(t) != item.String() {
		t.Fatalf("event %+v, want item %s", ev, item)
	}
	single := f.h.Do("GET", "/feeds/events/"+feed.id.String()+"/items/"+item.String()+"?include=source", nil).MustStatus(t, 200).Data()
	if b, _ := json.Marshal(single); canonical(t, ev.Data) != string(b) {
		t.Errorf("event data\n%s\nthe item\n%s", ev.Data, b)
	}
	res, err := f.h.Service.Commands.DetachSource(context.Background(), commands.DetachSource{FeedRef: feed.ref(), AttachmentID: att.ID})
	if err != nil {
		t.Fatal(err)
	}
	projected(t, f.h, res)
	removed := s.next(5 * time.Second)
	if removed.Event != "removed" || removed.itemID(t) != item.String() {
		t.Fatalf("event %+v, want the removal of %s", removed, item)
	}
	// Resuming after the item's event gives its removal alone.
	r := openStream(t, f.addr, path, f.h.Key, map[string]string{"Last-Event-ID": ev.ID})
	if again := r.next(5 * time.Second); again.ID != removed.ID || again.Event != "removed" {
		t.Fatalf("resumed with %+v, want %+v", again, removed)
	}
}

func TestAStreamServedByAnAPIProcessSeesItemsProjectedByAnother(t *testing.T) {
	f := newStreamFixture(t)
	// A long keep-alive: only the shared poller's wake can bring the item
	// within the test's bound.
	api := f.h.Another(func(c *config.Config) {
		c.Roles = map[string]bool{config.RoleAPI: true}
		c.StreamKeepAlive = time.Minute
	})
	if api.Service.Runner != nil {
		t.Fatal("the API process runs projectors")
	}
	s := openStream(t, api.Listen(), f.stream(), f.h.Key, nil)
	id := f.add(t, f.att, full(1))
	if got := s.next(5 * time.Second).itemID(t); got != id {
		t.Fatalf("got item %s, want %s", got, id)
	}
}

func TestAHeadRequestOfAStreamHoldsNoSlot(t *testing.T) {
	f := newStreamFixture(t, func(c *config.Config) { c.StreamsPerKey = 1 })
	status := func(method string) int {
		req, _ := http.NewRequest(method, "http://"+f.addr+f.stream(), nil)
		req.Header.Set("Authorization", "Bearer "+f.h.Key)
		// The document has no HEAD operations (OpenAPI derives them from
		// GET), so only the GETs are held to it.
		client := http.DefaultClient
		if method == http.MethodGet {
			client = documentedClient(t)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Each answer has no body, so its stream ends at once and frees the
	// key's one slot; the release follows the answer closely, so a 429
	// is retried for a while. A slot held for good fails.
	settled := func(method string) (got int) {
		wait.Within(3*time.Second, func() bool { got = status(method); return got != http.StatusTooManyRequests })
		return got
	}
	for i := range 3 {
		if got := settled(http.MethodHead); got != http.StatusOK {
			t.Fatalf("HEAD %d: status %d", i, got)
		}
	}
	if got := settled(http.MethodGet); got != http.StatusOK {
		t.Fatalf("a stream after the HEADs: status %d", got)
	}
}

func TestDeletingAFeedEndsItsStreams(t *testing.T) {
	// A long keep-alive: the stream must end because the poller finds
	// the feed gone, not at a keep-alive.
	f := newStreamFixture(t, func(c *config.Config) { c.StreamKeepAlive = time.Minute })
	s := openStream(t, f.addr, f.stream(), f.h.Key, nil)
	f.h.Do("DELETE", "/feeds/news/"+f.feedID, nil).MustStatus(t, 200)
	select {
	case <-s.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream of a deleted feed is still open")
	}
	r := f.h.Do("GET", f.stream(), nil)
	if r.Status != 404 {
		t.Fatalf("reopening answered %d, want 404", r.Status)
	}
}

func TestAProcessPastItsStreamBoundAnswers503(t *testing.T) {
	f := newStreamFixture(t, func(c *config.Config) { c.StreamsMax = 1 })
	openStream(t, f.addr, f.stream(), f.h.Key, nil)
	// Another key: the key's own bound is not what refuses it.
	r := f.h.DoWith("GET", f.stream(), nil, map[string]string{"Authorization": "Bearer " + f.h.NewKey("acme", "items")})
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", r.Status, r.Raw)
	}
	if e, _ := r.Body["error"].(map[string]any); e["code"] != "SERVICE_UNAVAILABLE" {
		t.Errorf("error %v, want SERVICE_UNAVAILABLE", e)
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
}
