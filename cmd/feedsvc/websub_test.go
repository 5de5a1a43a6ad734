package main

import (
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/crawltest"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// Issue 23: WebSub through `feedsvc serve`, against a local hub that
// follows the W3C recommendation (crawltest.Hub). ingest/websub's tests
// cover the subscriber's cases in depth in process; this one shows the
// whole path in a real process configured by its environment: the hub
// reaches the process's own listener at FEEDSVC_PUBLIC_URL.
func TestAServeProcessSubscribesAtTheHubAndListsWhatItPushesWithinASecond(t *testing.T) {
	// The hub grants five seconds, so that the renewal is seen in the
	// test; polling is hourly, so that nothing after the first poll comes
	// from polling.
	const lease = 5 * time.Second
	hub := crawltest.NewHub(t, lease)
	site := crawltest.NewSite(t, hub.URL, false, "First story")
	srv := startServed(t, "FEEDSVC_POLL_INTERVAL=1h", "FEEDSVC_MAX_POLL_INTERVAL=1h")
	api := srv.api

	feed := api.post("/feeds/news", map[string]any{"name": "pushed", "description": "a pushed feed"})["id"].(string)
	source := api.post("/feeds/news/"+feed+"/sources", map[string]any{"sourceType": "site", "domain": site.Domain()})["sourceId"].(string)
	wait.Until(t, 20*time.Second, "the first poll's item", func() bool { return api.lists(feed, site.ArticleURL(0)) })

	var sub crawltest.HubRequest
	t.Run("the first poll subscribes at the feed's hub and the intent verification passes", func(t *testing.T) {
		wait.Until(t, 10*time.Second, "a verified subscription at the hub", func() bool { return hub.Subscribers() == 1 })
		sub = hub.Requests("subscribe")[0]
		if sub.Topic != site.FeedURL() {
			t.Errorf("topic %q, want the feed's self URL %q", sub.Topic, site.FeedURL())
		}
		if !strings.HasPrefix(sub.Callback, srv.public+"/websub/") || len(sub.Secret) < 32 {
			t.Errorf("request %+v: want a callback under %s/websub/ and a secret", sub, srv.public)
		}
		if v := hub.Verifications("subscribe"); len(v) != 1 || !v[0].Echoed {
			t.Errorf("verifications %+v, want one that echoed the challenge", v)
		}
		wait.Until(t, 5*time.Second, "the source's detail to show the active subscription", func() bool {
			p, _ := api.polling(source)["push"].(map[string]any)
			return p["state"] == "active" && p["hub"] == hub.URL && p["topic"] == site.FeedURL()
		})
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("a signed push is listed within a second, without a poll", func(t *testing.T) {
		polls := site.Polls()
		fresh := site.Add("Breaking story")
		start := time.Now()
		if got := hub.Publish(sub.Topic, site.Feed()); len(got) != 1 || got[0]/100 != 2 {
			t.Fatalf("the callback answered %v, want one 2xx", got)
		}
		wait.Until(t, 10*time.Second, "the pushed entry in the feed", func() bool { return api.lists(feed, fresh) })
		took := time.Since(start)
		t.Logf("pushed entry listed %s after the push", took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("the pushed entry was listed %s after the push, want within a second", took.Round(time.Millisecond))
		}
		if site.Polls() != polls {
			t.Errorf("the feed was read %d times since the push: it must not need a poll", site.Polls()-polls)
		}
	})

	t.Run("a push without the subscription's signature is ignored", func(t *testing.T) {
		// The correctly signed push that follows the forged ones does not
		// carry the forged entry.
		second := site.Add("Second pushed story")
		signed := site.Feed()
		forged := site.Add("Forged story")
		body := site.Feed()
		for _, tt := range []struct {
			name string
			sig  func(secret string) string
		}{
			{"no signature", func(string) string { return "" }},
			{"another secret's", func(string) string { return "sha256=" + crawltest.Sign("not the secret", body) }},
			{"a signature of another body", func(s string) string { return "sha256=" + crawltest.Sign(s, signed) }},
		} {
			// Answered 2xx, as the recommendation allows: a forger learns
			// nothing.
			if got := hub.PublishSigned(sub.Topic, body, tt.sig); len(got) != 1 || got[0]/100 != 2 {
				t.Fatalf("%s: the callback answered %v, want 2xx", tt.name, got)
			}
		}
		hub.Publish(sub.Topic, signed)
		wait.Until(t, 10*time.Second, "the signed push's entry", func() bool { return api.lists(feed, second) })
		// Every push the callback accepted has been ingested: had a forged
		// one been taken, its entry would be in the feed by now.
		wait.Until(t, 10*time.Second, "the accepted pushes to be ingested", func() bool {
			return api.metric(`feedsvc_websub_pushes_ingested_total{outcome="ingested"}`) ==
				api.metric(`feedsvc_websub_pushes_received_total{outcome="accepted"}`) &&
				api.metric("feedsvc_websub_pushes_queued") == 0
		})
		if n := api.metric(`feedsvc_websub_pushes_received_total{outcome="bad_signature"}`); n != 3 {
			t.Errorf("%v pushes counted with a bad signature, want 3", n)
		}
		if api.lists(feed, forged) {
			t.Error("content pushed without a valid signature was ingested")
		}
	})

	t.Run("the lease is renewed at the hub before it ends", func(t *testing.T) {
		first := hub.Verifications("subscribe")[0].At
		firstExpiry := leaseExpiry(api.polling(source))
		wait.Until(t, 2*lease, "a renewal verified at the hub", func() bool { return len(hub.Verifications("subscribe")) >= 2 })
		renewal := hub.Requests("subscribe")[1]
		if renewal.Callback != sub.Callback || renewal.Topic != sub.Topic || renewal.Secret != sub.Secret {
			t.Fatalf("renewal %+v does not renew %+v", renewal, sub)
		}
		// Renewal is due at nine tenths of the lease, or two of the
		// subscriber's one-second turns before its end when a tenth is
		// shorter (3 s into this 5 s lease), and sent at the next turn;
		// the rest is slack for a loaded machine.
		due := lease - max(lease/10, 2*time.Second)
		if at := renewal.At.Sub(first); at < due-200*time.Millisecond || at > due+3*time.Second {
			t.Errorf("renewal sent %s after the verification, want %s into the %s lease", at.Round(time.Millisecond), due, lease)
		}
		if v := hub.Verifications("subscribe")[1]; !v.Echoed {
			t.Fatalf("the renewal's verification was refused (status %d)", v.Status)
		}
		wait.Until(t, 5*time.Second, "the source's detail to show the renewed lease", func() bool {
			return leaseExpiry(api.polling(source)).After(firstExpiry)
		})
	})
}

// leaseExpiry is the active subscription's lease end in a source's
// polling block; zero when there is none.
func leaseExpiry(polling map[string]any) time.Time {
	p, _ := polling["push"].(map[string]any)
	at, _ := p["leaseExpiresAt"].(string)
	if p["state"] != "active" {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, at)
	return t
}
