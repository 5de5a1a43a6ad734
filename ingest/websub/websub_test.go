package websub_test

import (
	"bytes"
	"compress/gzip"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/crawltest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// service is the whole service with its crawler, polling every hour (so
// that nothing a test sees within seconds comes from a second poll),
// serving the API on a loopback socket that the fake hub calls back on.
type service struct {
	h      *servicetest.Harness
	public string // FEEDSVC_PUBLIC_URL, "" when unset
}

func startService(t testing.TB, withPublicURL bool, opts ...servicetest.Option) *service {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := ""
	if withPublicURL {
		public = "http://" + ln.Addr().String()
	}
	h := servicetest.Start(t, append([]servicetest.Option{servicetest.WithCrawler(), func(c *config.Config) {
		// Hourly however busy a site looks: what a test sees after the
		// first poll comes from pushes.
		c.PollInterval, c.MinPollInterval, c.MaxPollInterval = time.Hour, time.Hour, time.Hour
		c.PublicURL = public
	}}, opts...)...)
	h.Serve(ln)
	return &service{h: h, public: public}
}

// follow attaches the site to a new news feed and waits for the first
// poll to list its articles; it returns the feed and the attachment.
func (s *service) follow(t testing.TB, site *crawltest.Site, want ...string) (feed string, att map[string]any) {
	t.Helper()
	feed = s.h.Do("POST", "/feeds/news", map[string]any{"name": "pushed", "description": "a pushed feed"}).
		MustStatus(t, http.StatusCreated).Data()["id"].(string)
	att = s.h.Do("POST", "/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": site.Domain()}).
		MustStatus(t, http.StatusCreated).Data()
	wait.Until(t, 20*time.Second, "the first poll's items", func() bool { return s.lists(t, feed, want...) })
	return feed, att
}

// lists reports whether the feed lists every one of the URLs.
func (s *service) lists(t testing.TB, feed string, urls ...string) bool {
	t.Helper()
	r := s.h.Do("GET", "/feeds/news/"+feed+"/items?limit=100", nil).MustStatus(t, http.StatusOK)
	items, _ := r.Data()["items"].([]any)
	have := map[string]int{}
	for _, v := range items {
		u, _ := v.(map[string]any)["url"].(string)
		have[u]++
		if have[u] > 1 {
			t.Errorf("feed %s lists %s twice", feed, u)
		}
	}
	for _, u := range urls {
		if have[u] == 0 {
			return false
		}
	}
	return true
}

// push is the source's detail's push block; nil when absent.
func (s *service) push(t testing.TB, sourceID string) map[string]any {
	t.Helper()
	r := s.h.Do("GET", "/sources/"+sourceID, nil).MustStatus(t, http.StatusOK)
	polling, _ := r.Data()["polling"].(map[string]any)
	p, _ := polling["push"].(map[string]any)
	return p
}

// subscribed follows the site and waits until the hub has verified the
// service's subscription; it returns the feed, the attachment and the
// subscription request.
func (s *service) subscribed(t testing.TB, hub *crawltest.Hub, site *crawltest.Site, want ...string) (string, map[string]any, crawltest.HubRequest) {
	t.Helper()
	feed, att := s.follow(t, site, want...)
	wait.Until(t, 10*time.Second, "a verified subscription at the hub", func() bool { return hub.Subscribers() == 1 })
	return feed, att, hub.Requests("subscribe")[0]
}

func TestAFeedThatNamesAHubIsSubscribedOnlyWhenThereIsAPublicURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		publicURL   bool
		hubInHeader bool
	}{
		{"a hub in the feed's links is subscribed", true, false},
		{"a hub in the feed's Link header is subscribed", true, true},
		{"without a public URL no hub is asked", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hub := crawltest.NewHub(t, time.Hour)
			site := crawltest.NewSite(t, hub.URL, tt.hubInHeader, "First story")
			svc := startService(t, tt.publicURL)
			_, att := svc.follow(t, site, site.ArticleURL(0))
			source := att["sourceId"].(string)
			if !tt.publicURL {
				// The subscriber's loop runs every second: three give it
				// every chance to ask.
				time.Sleep(3 * time.Second)
				if n := len(hub.Requests("subscribe")); n != 0 {
					t.Fatalf("the hub got %d subscription requests from a service without a public URL", n)
				}
				if p := svc.push(t, source); p == nil || p["state"] != "pending" {
					t.Fatalf("push %v, want the hub recorded as pending", p)
				}
				return
			}
			wait.Until(t, 10*time.Second, "a verified subscription", func() bool { return hub.Subscribers() == 1 })
			req := hub.Requests("subscribe")[0]
			if req.Topic != site.FeedURL() {
				t.Errorf("topic %q, want the feed's self URL %q", req.Topic, site.FeedURL())
			}
			if !strings.HasPrefix(req.Callback, svc.public+"/websub/") || len(req.Secret) < 32 || req.LeaseSeconds == "" {
				t.Errorf("request %+v: want a callback under %s/websub/, a secret and a lease", req, svc.public)
			}
			if v := hub.Verifications("subscribe"); len(v) != 1 || !v[0].Echoed {
				t.Errorf("verifications %+v, want one that echoed the challenge", v)
			}
			wait.Until(t, 5*time.Second, "the source's detail to show the active subscription", func() bool {
				p := svc.push(t, source)
				return p != nil && p["state"] == "active" && p["hub"] == hub.URL && p["leaseExpiresAt"] != nil
			})
		})
	}
}

func TestTheCallbackEchoesAChallengeOnlyForARequestItSent(t *testing.T) {
	t.Parallel()
	hub := crawltest.NewHub(t, time.Hour)
	site := crawltest.NewSite(t, hub.URL, false, "First story")
	svc := startService(t, true)
	_, _, req := svc.subscribed(t, hub, site, site.ArticleURL(0))
	unknown := svc.public + "/websub/" + strings.Repeat("A", 43)
	for _, tt := range []struct {
		name, callback, mode, topic string
	}{
		{"a subscription already verified is not confirmed again", req.Callback, "subscribe", req.Topic},
		{"another topic is refused", req.Callback, "subscribe", site.URL + "/other.atom"},
		{"an unsubscription nobody asked for is refused", req.Callback, "unsubscribe", req.Topic},
		{"an unknown callback is refused", unknown, "subscribe", req.Topic},
		{"a malformed callback id is refused", svc.public + "/websub/x", "subscribe", req.Topic},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ok, status := hub.SendVerification(tt.callback, tt.mode, tt.topic)
			if ok || status != http.StatusNotFound {
				t.Fatalf("echoed %v with status %d, want 404 without the challenge", ok, status)
			}
		})
	}
	// A request the service did send is confirmed (the lease renewal in
	// TestLeasesAreRenewedBeforeTheyExpire, the unsubscription in
	// TestDetachingTheSourceFromEveryFeedUnsubscribes); a denial is
	// taken for the subscription's topic only.
	if status := hub.Deny(req.Callback, site.URL+"/other.atom"); status != http.StatusNotFound {
		t.Fatalf("a denial of another topic answered %d, want 404", status)
	}
	if status := hub.Deny(req.Callback, req.Topic); status != http.StatusOK {
		t.Fatalf("a denial answered %d, want 200", status)
	}
}

func TestAPushedEntryIsListedWithinASecondAndOnce(t *testing.T) {
	t.Parallel()
	hub := crawltest.NewHub(t, time.Hour)
	site := crawltest.NewSite(t, hub.URL, false, "First story")
	svc := startService(t, true)
	feed, _, req := svc.subscribed(t, hub, site, site.ArticleURL(0))
	polls := site.Polls()

	fresh := site.Add("Breaking story")
	start := time.Now()
	if got := hub.Publish(req.Topic, site.Feed()); len(got) != 1 || got[0]/100 != 2 {
		t.Fatalf("the callback answered %v, want one 2xx", got)
	}
	wait.Until(t, 3*time.Second, "the pushed entry in the feed", func() bool { return svc.lists(t, feed, fresh) })
	// How long it takes is measured by BenchmarkAPushedEntryUntilListed;
	// three seconds only bound the wait, an hour before the next poll.
	t.Logf("pushed entry listed %s after the push", time.Since(start).Round(time.Millisecond))
	if site.Polls() != polls {
		t.Fatalf("the feed was polled %d times since the subscription: the push must not need a poll", site.Polls()-polls)
	}
	// The same content pushed again adds nothing.
	hub.Publish(req.Topic, site.Feed())
	time.Sleep(time.Second) // nothing must come of it: only time can show that
	svc.lists(t, feed, fresh, site.ArticleURL(0))
}

func TestAPushWithoutAValidSignatureIsIgnored(t *testing.T) {
	t.Parallel()
	hub := crawltest.NewHub(t, time.Hour)
	site := crawltest.NewSite(t, hub.URL, false, "First story")
	svc := startService(t, true)
	feed, _, req := svc.subscribed(t, hub, site, site.ArticleURL(0))
	forged := site.Add("Forged story")
	body := site.Feed()
	for _, tt := range []struct {
		name string
		sig  func(secret string) string
	}{
		{"no signature", func(string) string { return "" }},
		{"another secret's", func(string) string { return "sha256=" + crawltest.Sign("not the secret", body) }},
		{"an unknown method", func(s string) string { return "md5=" + crawltest.Sign(s, body) }},
		{"a signature of another body", func(s string) string { return "sha256=" + crawltest.Sign(s, body+" ") }},
	} {
		if got := hub.PublishSigned(req.Topic, body, tt.sig); len(got) != 1 || got[0]/100 != 2 {
			t.Fatalf("%s: the callback answered %v, want 2xx (content ignored, not refused)", tt.name, got)
		}
	}
	// A correctly signed push is listed within a second (the test above):
	// three leave no doubt that these were ignored.
	time.Sleep(3 * time.Second)
	if svc.lists(t, feed, forged) {
		t.Fatal("content pushed without a valid signature was ingested")
	}
	// The same body correctly signed is taken: what was refused was the
	// signature.
	hub.Publish(req.Topic, body)
	wait.Until(t, 3*time.Second, "the correctly signed push", func() bool { return svc.lists(t, feed, forged) })
}

func TestLeasesAreRenewedBeforeTheyExpire(t *testing.T) {
	t.Parallel()
	// A hub granting three seconds: the subscriber must ask again before
	// they run out, and the hub verify the renewal.
	hub := crawltest.NewHub(t, 3*time.Second)
	site := crawltest.NewSite(t, hub.URL, false, "First story")
	svc := startService(t, true)
	_, _, first := svc.subscribed(t, hub, site, site.ArticleURL(0))
	verified := hub.Verifications("subscribe")[0].At
	wait.Until(t, 10*time.Second, "a renewal", func() bool { return len(hub.Verifications("subscribe")) >= 2 })
	renewal := hub.Requests("subscribe")[1]
	if renewal.Callback != first.Callback || renewal.Topic != first.Topic {
		t.Fatalf("renewal %+v does not renew %+v", renewal, first)
	}
	if late := renewal.At.Sub(verified); late >= 3*time.Second {
		t.Fatalf("renewal sent %s after the verification, after the lease ran out", late)
	}
	if v := hub.Verifications("subscribe")[1]; !v.Echoed {
		t.Fatalf("the renewal's verification was refused (status %d)", v.Status)
	}
}

func TestDetachingTheSourceFromEveryFeedUnsubscribes(t *testing.T) {
	t.Parallel()
	hub := crawltest.NewHub(t, time.Hour)
	site := crawltest.NewSite(t, hub.URL, false, "First story")
	svc := startService(t, true)
	feed, att, req := svc.subscribed(t, hub, site, site.ArticleURL(0))
	svc.h.Do("DELETE", "/feeds/news/"+feed+"/sources/"+att["id"].(string), nil).MustStatus(t, http.StatusOK)
	wait.Until(t, 10*time.Second, "the unsubscription verified at the hub", func() bool { return hub.Subscribers() == 0 })
	unsub := hub.Requests("unsubscribe")
	if len(unsub) != 1 || unsub[0].Callback != req.Callback || unsub[0].Topic != req.Topic {
		t.Fatalf("unsubscription requests %+v, want one for %+v", unsub, req)
	}
	// The callback is gone with it: the hub's pushes are refused.
	if got := hub.PublishTo(req.Callback, site.Feed(), req.Secret); got != http.StatusNotFound {
		t.Fatalf("a push after the unsubscription answered %d, want 404", got)
	}
}

func TestTheCallbackIsBoundedInSizeAndRateAndEchoesNothing(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	id := strings.Repeat("B", 43)
	noKey := map[string]string{"Content-Type": "application/atom+xml"}
	for _, tt := range []struct {
		name string
		size int
		want int
	}{
		{"a push over the API's 1 MiB but within a feed's 5 MiB reaches the callback", 2 << 20, http.StatusNotFound},
		{"a push over a feed's 5 MiB is refused before it", 6 << 20, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := h.DoWith("POST", "/websub/"+id, strings.Repeat("x", tt.size), noKey)
			if r.Status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.want, r.Raw)
			}
		})
	}
	t.Run("a compressed push is refused before it is decoded", func(t *testing.T) {
		// 64 MiB of zeros gzip to about 64 KiB: decoded, it would pass
		// the body bound twelve times over.
		var bomb bytes.Buffer
		zw := gzip.NewWriter(&bomb)
		if _, err := zw.Write(make([]byte, 64<<20)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		r := h.DoWith("POST", "/websub/"+id, bomb.Bytes(), map[string]string{"Content-Type": "application/atom+xml", "Content-Encoding": "gzip"})
		if r.Status != http.StatusUnsupportedMediaType {
			t.Fatalf("status %d, want 415: %s", r.Status, r.Raw)
		}
	})
	t.Run("one callback's requests are rate limited", func(t *testing.T) {
		statuses := map[int]int{}
		for range 40 {
			r := h.DoWith("GET", "/websub/"+id+"?hub.mode=subscribe&hub.topic=https%3A%2F%2Fecho.example%2F&hub.challenge=c4allenge", nil, nil)
			statuses[r.Status]++
			if strings.Contains(r.Raw, id) || strings.Contains(r.Raw, "echo.example") || strings.Contains(r.Raw, "c4allenge") {
				t.Fatalf("answer %d echoes the request: %s", r.Status, r.Raw)
			}
		}
		// 10 a second with a burst of 20 (less the pushes above).
		if statuses[http.StatusNotFound] == 0 || statuses[http.StatusTooManyRequests] == 0 || statuses[http.StatusNotFound] > 21 {
			t.Fatalf("statuses %v, want 404s then 429s", statuses)
		}
	})
}

func TestAPushedSourceIsPolledAsTheFallbackAtTheIntervalHoweverBusy(t *testing.T) {
	t.Parallel()
	hub := crawltest.NewHub(t, time.Hour)
	pushed := crawltest.NewSite(t, hub.URL, false, "Pushed story")
	polled := crawltest.NewSite(t, "", false, "Polled story")
	polled.NoHub = true
	// An hour's interval; a busy source may be polled every minute.
	svc := startService(t, true, func(c *config.Config) { c.MinPollInterval = time.Minute })
	_, pushedAtt, _ := svc.subscribed(t, hub, pushed, pushed.ArticleURL(0))
	_, polledAtt := svc.follow(t, polled, polled.ArticleURL(0))
	db := svc.h.Service.DB.Bun
	// Both sources look busy: 500 articles just now would have them
	// polled every minute, under the hour. They are made due, and the
	// next poll schedules the one after it. The articles come after the
	// first poll has written its schedule: what a source's first poll
	// found is not evidence of its pace.
	interval, reason := map[string]time.Duration{}, map[string]string{}
	for name, att := range map[string]map[string]any{"pushed": pushedAtt, "polled": polledAtt} {
		source := att["sourceId"].(string)
		wait.Until(t, 10*time.Second, "the "+name+" source's first poll to write its schedule", func() bool {
			var written bool
			err := db.NewRaw(`SELECT watched_since IS NOT NULL AND lease_owner IS NULL FROM crawl_state WHERE source_id = ?`, source).
				Scan(t.Context(), &written)
			return err == nil && written
		})
		if _, err := db.ExecContext(t.Context(), `INSERT INTO crawl_seen (source_id, url, effective_at)
			SELECT ?, 'https://busy.example/' || i, now() FROM generate_series(1, 500) i`, source); err != nil {
			t.Fatal(err)
		}
		var before time.Time
		if err := db.NewRaw(`UPDATE crawl_state SET next_at = now() WHERE source_id = ? RETURNING last_crawl_at`, source).
			Scan(t.Context(), &before); err != nil {
			t.Fatal(err)
		}
		wait.Until(t, 10*time.Second, "the "+name+" source's next poll", func() bool {
			var after time.Time
			var ms int64
			var why string
			err := db.NewRaw(`SELECT last_crawl_at, coalesce(interval_ms, 0), coalesce(interval_reason, '') FROM crawl_state WHERE source_id = ?`, source).
				Scan(t.Context(), &after, &ms, &why)
			interval[name], reason[name] = time.Duration(ms)*time.Millisecond, why
			return err == nil && after.After(before)
		})
	}
	if interval["polled"] != time.Minute || reason["polled"] != "busy" {
		t.Fatalf("the source without a hub got %s for %q: the test's busy source should be polled every minute", interval["polled"], reason["polled"])
	}
	if interval["pushed"] != time.Hour || reason["pushed"] != "push" {
		t.Fatalf("the pushed source got %s for %q, want the interval (1h) for push; the one without a hub got %s", interval["pushed"], reason["pushed"], interval["polled"])
	}
}
