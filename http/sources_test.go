package http_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Contract tests of news feed sources (api.md 2.2, 4.3) and of the shared
// source records behind them (D4, D5).

// wantAttachment fails unless m is exactly a source attachment (2.2 plus
// the enabled flag), with sourceDetails only when withDetails.
func wantAttachment(t *testing.T, what string, m map[string]any, feedID string, withDetails bool) map[string]any {
	t.Helper()
	keys := []string{"id", "newsFeedId", "sourceType", "sourceId", "enabled", "createdAt"}
	if withDetails {
		keys = append(keys, "sourceDetails")
	}
	wantKeys(t, what, m, keys...)
	wantUUID(t, what+".id", m["id"])
	wantUUID(t, what+".sourceId", m["sourceId"])
	if m["newsFeedId"] != feedID {
		t.Fatalf("%s.newsFeedId is %v, want %s", what, m["newsFeedId"], feedID)
	}
	if _, ok := m["enabled"].(bool); !ok {
		t.Fatalf("%s.enabled is %T, want a boolean", what, m["enabled"])
	}
	wantTimestamp(t, what+".createdAt", m["createdAt"])
	if !withDetails {
		return nil
	}
	d := wantObject(t, what+".sourceDetails", m["sourceDetails"])
	if d["sourceType"] != m["sourceType"] {
		t.Fatalf("%s.sourceDetails.sourceType %v differs from sourceType %v", what, d["sourceType"], m["sourceType"])
	}
	return d
}

func TestAttachingASiteNormalizesTheDomainAndAnswers201(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Sites", "domains")["id"].(string)
	cases := []struct{ in, want string }{
		{"HTTPS://Example.COM/", "example.com"},
		{"news.example.org", "news.example.org"},
		{"http://Blog.Example.net", "blog.example.net"},
		{"  padded.example  ", "padded.example"},
		{"127.0.0.1:8081", "127.0.0.1:8081"},
		{"http://localhost:8080/", "localhost:8080"},
		{"sub.domain.example.co.uk", "sub.domain.example.co.uk"},
		{"[::1]:8081", "[::1]:8081"},
		{"my-site_01.example", "my-site_01.example"},
		{"Bücher.Example", "bücher.example"},
	}
	for _, tc := range cases {
		t.Run(tc.in+" becomes "+tc.want, func(t *testing.T) {
			att := attach(t, c, feedID, site(tc.in))
			d := wantAttachment(t, "attachment", att, feedID, true)
			wantKeys(t, "sourceDetails", d, "sourceType", "domain")
			if att["sourceType"] != "site" || d["domain"] != tc.want {
				t.Fatalf("attached %s, want a site with domain %s", jsonOf(att), tc.want)
			}
			if att["enabled"] != true {
				t.Fatalf("a new attachment is not enabled: %s", jsonOf(att))
			}
			rec := wantDataObject(t, c.do(t, "GET", "/sources/"+att["sourceId"].(string), nil), http.StatusOK)
			if rec["domain"] != tc.want || rec["sourceType"] != "site" {
				t.Fatalf("record %s", jsonOf(rec))
			}
		})
	}
}

func TestAttachingASiteWithAnInvalidDomainAnswers400NamingTheDomain(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Bad sites", "domains")["id"].(string)
	path := "/feeds/news/" + feedID + "/sources"
	cases := []struct {
		name string
		body string
	}{
		{"a path", `{"sourceType":"site","domain":"example.com/news"}`},
		{"a URL with a path", `{"sourceType":"site","domain":"https://example.com/a/b"}`},
		{"a query", `{"sourceType":"site","domain":"example.com?x=1"}`},
		{"a space inside", `{"sourceType":"site","domain":"exa mple.com"}`},
		{"an empty domain", `{"sourceType":"site","domain":""}`},
		{"a whitespace domain", `{"sourceType":"site","domain":"   "}`},
		{"only a scheme", `{"sourceType":"site","domain":"https://"}`},
		{"a missing domain", `{"sourceType":"site"}`},
		{"a null domain", `{"sourceType":"site","domain":null}`},
		{"credentials", `{"sourceType":"site","domain":"user@example.com"}`},
		{"an empty port", `{"sourceType":"site","domain":"example.com:"}`},
		{"a double dot", `{"sourceType":"site","domain":"example..com"}`},
		{"a numeric domain", `{"sourceType":"site","domain":42}`},
		{"a NUL character", `{"sourceType":"site","domain":"exa\u0000mple.com"}`},
		{"a control character", `{"sourceType":"site","domain":"exa\u0007mple.com"}`},
		{"a port that is not a number", `{"sourceType":"site","domain":"example.com:abc"}`},
		{"a port out of range", `{"sourceType":"site","domain":"example.com:99999"}`},
		{"port zero", `{"sourceType":"site","domain":"example.com:0"}`},
		{"an IPv6 address without brackets", `{"sourceType":"site","domain":"::1"}`},
		{"a wildcard", `{"sourceType":"site","domain":"*.example.com"}`},
		{"a comma", `{"sourceType":"site","domain":"a,b.example"}`},
		{"angle brackets", `{"sourceType":"site","domain":"a<b>.example"}`},
		{"a percent escape", `{"sourceType":"site","domain":"%41.example"}`},
		{"a label starting with a hyphen", `{"sourceType":"site","domain":"-a.example"}`},
		{"a 100,000-character domain", `{"sourceType":"site","domain":"` + strings.Repeat("a", 100_000) + `.com"}`},
		{"a label of 64 characters", `{"sourceType":"site","domain":"` + strings.Repeat("a", 64) + `.com"}`},
		{"a name of 254 characters", `{"sourceType":"site","domain":"` + strings.Repeat("abcdefghi.", 25) + `info"}`},
	}
	for _, tc := range cases {
		t.Run("with "+tc.name, func(t *testing.T) {
			wantValidation(t, c.do(t, "POST", path, tc.body), "domain")
		})
	}
	t.Run("none of them attached or registered anything", func(t *testing.T) {
		if srcs := wantDataList(t, c.do(t, "GET", path, nil)); len(srcs) != 0 {
			t.Fatalf("sources %s", jsonOf(srcs))
		}
		if recs := wantDataList(t, c.do(t, "GET", "/sources", nil)); len(recs) != 0 {
			t.Fatalf("records %s", jsonOf(recs))
		}
	})
}

func TestAttachingASourceTypeThatIsUnknownOrMissingOrAPlatformAnswers400(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Types", "types")["id"].(string)
	cases := []struct {
		name string
		body map[string]any
	}{
		{"no sourceType", map[string]any{"domain": "example.com"}},
		{"a null sourceType", map[string]any{"sourceType": nil, "domain": "example.com"}},
		{"an empty sourceType", map[string]any{"sourceType": "", "domain": "example.com"}},
		{"an unknown sourceType", map[string]any{"sourceType": "rss", "domain": "example.com"}},
		{"a differently cased sourceType", map[string]any{"sourceType": "Site", "domain": "example.com"}},
		{"a numeric sourceType", map[string]any{"sourceType": 1, "domain": "example.com"}},
		{"instagram", map[string]any{"sourceType": "instagram", "username": "@someone"}},
		{"tiktok", map[string]any{"sourceType": "tiktok", "username": "someone"}},
		{"twitter", map[string]any{"sourceType": "twitter", "username": "someone"}},
		{"facebook", map[string]any{"sourceType": "facebook", "facebookType": "page", "identifier": "someone"}},
		{"photoshare", map[string]any{"sourceType": "photoshare", "username": "someone"}},
		{"shortvideo", map[string]any{"sourceType": "shortvideo", "username": "someone"}},
		{"microblog", map[string]any{"sourceType": "microblog", "username": "someone"}},
		{"socialnet", map[string]any{"sourceType": "socialnet", "socialnetType": "group", "identifier": "123"}},
	}
	for _, tc := range cases {
		t.Run("with "+tc.name, func(t *testing.T) {
			wantValidation(t, c.do(t, "POST", "/feeds/news/"+feedID+"/sources", tc.body), "sourceType")
			wantValidation(t, c.do(t, "POST", "/sources", tc.body), "sourceType")
		})
	}
	t.Run("none of them registered anything", func(t *testing.T) {
		if recs := wantDataList(t, c.do(t, "GET", "/sources", nil)); len(recs) != 0 {
			t.Fatalf("records %s", jsonOf(recs))
		}
	})
}

func TestAttachingTheSameDomainTwiceToAFeedAnswers409(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Dupes", "dupes")["id"].(string)
	path := "/feeds/news/" + feedID + "/sources"
	first := attach(t, c, feedID, site("dupe.example"))
	for _, again := range []string{"dupe.example", "DUPE.example", "https://dupe.example/", "http://Dupe.Example"} {
		t.Run(again, func(t *testing.T) {
			wantConflict(t, c.do(t, "POST", path, site(again)))
		})
	}
	t.Run("the feed still has the one attachment", func(t *testing.T) {
		srcs := wantDataList(t, c.do(t, "GET", path, nil))
		if len(srcs) != 1 || srcs[0]["id"] != first["id"] {
			t.Fatalf("sources %s", jsonOf(srcs))
		}
	})
	t.Run("a different port is a different site", func(t *testing.T) {
		attach(t, c, feedID, site("dupe.example:8443"))
	})
}

func TestTheSameDomainInTwoFeedsSharesOneSourceRecord(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))
	a := createFeed(t, acme, "A", "a")["id"].(string)
	b := createFeed(t, acme, "B", "b")["id"].(string)
	g := createFeed(t, globex, "G", "g")["id"].(string)

	inA := attach(t, acme, a, site("shared.example"))
	inB := attach(t, acme, b, site("HTTPS://Shared.Example/"))
	inG := attach(t, globex, g, site("shared.example"))
	if inA["sourceId"] != inB["sourceId"] || inA["sourceId"] != inG["sourceId"] {
		t.Fatalf("sourceIds differ: %v, %v, %v", inA["sourceId"], inB["sourceId"], inG["sourceId"])
	}
	if inA["id"] == inB["id"] || inA["id"] == inG["id"] || inB["id"] == inG["id"] {
		t.Fatalf("attachment ids collide: %v, %v, %v", inA["id"], inB["id"], inG["id"])
	}
	for _, c := range []caller{acme, globex} {
		recs := wantDataList(t, c.do(t, "GET", "/sources", nil))
		if len(recs) != 1 || recs[0]["id"] != inA["sourceId"] {
			t.Fatalf("records %s, want the one shared record", jsonOf(recs))
		}
	}
}

func TestPageSourcesReferenceASiteTheOrganizationKnows(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))
	feedID := createFeed(t, acme, "Pages", "sitemaps and index pages")["id"].(string)
	path := "/feeds/news/" + feedID + "/sources"
	siteID := attach(t, acme, feedID, site("pages.example"))["sourceId"].(string)
	globexFeed := createFeed(t, globex, "G", "g")["id"].(string)
	globexSite := attach(t, globex, globexFeed, site("globex.example"))["sourceId"].(string)

	var sitemapRecord string
	for _, kind := range []string{"sitemap", "siteIndexPage"} {
		t.Run("a "+kind+" answers 201 echoing url and siteId", func(t *testing.T) {
			att := attach(t, acme, feedID, map[string]any{"sourceType": kind, "url": "HTTPS://Pages.Example/" + kind + ".xml", "siteId": siteID})
			d := wantAttachment(t, "attachment", att, feedID, true)
			wantKeys(t, "sourceDetails", d, "sourceType", "url", "siteId")
			want := "https://pages.example/" + kind + ".xml"
			if att["sourceType"] != kind || d["url"] != want || d["siteId"] != siteID {
				t.Fatalf("attached %s, want %s %s for site %s", jsonOf(att), kind, want, siteID)
			}
			if att["sourceId"] == siteID {
				t.Fatalf("the %s shares the site's record", kind)
			}
			if kind == "sitemap" {
				sitemapRecord = att["sourceId"].(string)
			}
			wantConflict(t, acme.do(t, "POST", path, map[string]any{"sourceType": kind, "url": want, "siteId": siteID}))
		})
	}
	missing := randomID()
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a missing url", map[string]any{"sourceType": "sitemap", "siteId": siteID}, "url"},
		{"an empty url", map[string]any{"sourceType": "sitemap", "url": "", "siteId": siteID}, "url"},
		{"a relative url", map[string]any{"sourceType": "sitemap", "url": "/sitemap.xml", "siteId": siteID}, "url"},
		{"a url without a scheme", map[string]any{"sourceType": "siteIndexPage", "url": "pages.example/news", "siteId": siteID}, "url"},
		{"an ftp url", map[string]any{"sourceType": "sitemap", "url": "ftp://pages.example/sitemap.xml", "siteId": siteID}, "url"},
		{"a url with a space", map[string]any{"sourceType": "sitemap", "url": "https://pages.example/site map.xml", "siteId": siteID}, "url"},
		{"a numeric url", map[string]any{"sourceType": "sitemap", "url": 7, "siteId": siteID}, "url"},
		{"a missing siteId", map[string]any{"sourceType": "sitemap", "url": "https://pages.example/a.xml"}, "siteId"},
		{"an empty siteId", map[string]any{"sourceType": "siteIndexPage", "url": "https://pages.example/a", "siteId": ""}, "siteId"},
		{"a malformed siteId", map[string]any{"sourceType": "sitemap", "url": "https://pages.example/a.xml", "siteId": "not-a-uuid"}, "siteId"},
		{"a numeric siteId", map[string]any{"sourceType": "sitemap", "url": "https://pages.example/a.xml", "siteId": 12}, "siteId"},
		{"a siteId of a sitemap record", map[string]any{"sourceType": "sitemap", "url": "https://pages.example/b.xml", "siteId": "SITEMAP"}, "siteId"},
	}
	for _, tc := range cases {
		t.Run("with "+tc.name+" answers 400", func(t *testing.T) {
			if tc.body["siteId"] == "SITEMAP" {
				tc.body["siteId"] = sitemapRecord
			}
			wantValidation(t, acme.do(t, "POST", path, tc.body), tc.field)
			wantValidation(t, acme.do(t, "POST", "/sources", tc.body), tc.field)
		})
	}
	t.Run("an unknown siteId answers 404", func(t *testing.T) {
		body := map[string]any{"sourceType": "sitemap", "url": "https://pages.example/c.xml", "siteId": missing}
		wantNotFound(t, acme.do(t, "POST", path, body), "source", missing)
		wantNotFound(t, acme.do(t, "POST", "/sources", body), "source", missing)
	})
	t.Run("another organization's site answers 404 until the organization knows it", func(t *testing.T) {
		body := map[string]any{"sourceType": "siteIndexPage", "url": "https://globex.example/news", "siteId": globexSite}
		wantNotFound(t, acme.do(t, "POST", path, body), "source", globexSite)
		wantNotFound(t, acme.do(t, "POST", "/sources", body), "source", globexSite)
		// Its first registration of that identity: 201, as if it were new.
		wantData(t, acme.do(t, "POST", "/sources", site("globex.example")), http.StatusCreated)
		attach(t, acme, feedID, body)
	})
	t.Run("the feed lists exactly the successful attachments", func(t *testing.T) {
		srcs := wantDataList(t, acme.do(t, "GET", path, nil))
		if len(srcs) != 4 { // the site, a sitemap, an index page, globex's index page
			t.Fatalf("%d attachments, want 4: %s", len(srcs), jsonOf(srcs))
		}
	})
}

func TestAttachingToAMissingFeedAnswers404AndLeavesNoTrace(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	id := randomID()
	wantNotFound(t, c.do(t, "POST", "/feeds/news/"+id+"/sources", site("orphan.example")), "feed", id)
	if recs := wantDataList(t, c.do(t, "GET", "/sources", nil)); len(recs) != 0 {
		t.Fatalf("an add to a missing feed registered %s", jsonOf(recs))
	}
}

func TestListingAFeedsSourcesShowsAttachmentsNewestFirstWithoutDetails(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "List", "sources")["id"].(string)
	other := createFeed(t, c, "Other", "sources")["id"].(string)
	path := "/feeds/news/" + feedID + "/sources"

	if srcs := wantDataList(t, c.do(t, "GET", path, nil)); len(srcs) != 0 {
		t.Fatalf("a new feed lists %s", jsonOf(srcs))
	}
	var ids []string
	for _, d := range []string{"one.example", "two.example", "three.example"} {
		ids = append(ids, attach(t, c, feedID, site(d))["id"].(string))
	}
	attach(t, c, other, site("elsewhere.example"))
	srcs := wantDataList(t, c.do(t, "GET", path, nil))
	if len(srcs) != len(ids) {
		t.Fatalf("%d attachments, want %d: %s", len(srcs), len(ids), jsonOf(srcs))
	}
	var prev time.Time
	for i, s := range srcs {
		wantAttachment(t, "listed attachment", s, feedID, false)
		if want := ids[len(ids)-1-i]; s["id"] != want {
			t.Fatalf("attachment %d is %v, want %s (newest first)", i, s["id"], want)
		}
		created := wantTimestamp(t, "createdAt", s["createdAt"])
		if i > 0 && created.After(prev) {
			t.Fatalf("attachment %d is newer than the one before it", i)
		}
		prev = created
	}
}

func TestEnablingAndDisablingASourceAnswersTheAttachment(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))
	feedID := createFeed(t, c, "Toggle", "sources")["id"].(string)
	otherFeed := createFeed(t, c, "Other", "sources")["id"].(string)
	att := attach(t, c, feedID, site("toggle.example"))
	path := "/feeds/news/" + feedID + "/sources/" + att["id"].(string)

	set := func(t *testing.T, enabled bool) {
		t.Helper()
		got := wantDataObject(t, c.do(t, "PATCH", path, map[string]any{"enabled": enabled}), http.StatusOK)
		wantAttachment(t, "updated attachment", got, feedID, false)
		if got["id"] != att["id"] || got["sourceId"] != att["sourceId"] || got["createdAt"] != att["createdAt"] || got["enabled"] != enabled {
			t.Fatalf("update answered %s for %s", jsonOf(got), jsonOf(att))
		}
		srcs := wantDataList(t, c.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil))
		if len(srcs) != 1 || srcs[0]["enabled"] != enabled {
			t.Fatalf("list after update %s", jsonOf(srcs))
		}
	}
	t.Run("disabling answers enabled false", func(t *testing.T) { set(t, false) })
	t.Run("disabling again is harmless", func(t *testing.T) { set(t, false) })
	t.Run("enabling answers enabled true", func(t *testing.T) { set(t, true) })

	cases := []struct {
		name string
		body string
	}{
		{"a missing enabled", `{}`},
		{"a null enabled", `{"enabled":null}`},
		{"a string enabled", `{"enabled":"false"}`},
		{"a numeric enabled", `{"enabled":0}`},
	}
	for _, tc := range cases {
		t.Run("with "+tc.name+" answers 400", func(t *testing.T) {
			wantValidation(t, c.do(t, "PATCH", path, tc.body), "enabled")
		})
	}
	t.Run("an unknown attachment answers 404", func(t *testing.T) {
		id := randomID()
		wantNotFound(t, c.do(t, "PATCH", "/feeds/news/"+feedID+"/sources/"+id, map[string]any{"enabled": false}), "source", id)
	})
	t.Run("the record id is not an attachment id", func(t *testing.T) {
		id := att["sourceId"].(string)
		wantNotFound(t, c.do(t, "PATCH", "/feeds/news/"+feedID+"/sources/"+id, map[string]any{"enabled": false}), "source", id)
	})
	t.Run("an attachment of another feed answers 404", func(t *testing.T) {
		id := att["id"].(string)
		wantNotFound(t, c.do(t, "PATCH", "/feeds/news/"+otherFeed+"/sources/"+id, map[string]any{"enabled": false}), "source", id)
	})
	t.Run("another organization gets 404 for the feed", func(t *testing.T) {
		wantNotFound(t, globex.do(t, "PATCH", path, map[string]any{"enabled": false}), "feed", feedID)
	})
	t.Run("the attachment is still enabled", func(t *testing.T) {
		srcs := wantDataList(t, c.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil))
		if len(srcs) != 1 || srcs[0]["enabled"] != true {
			t.Fatalf("list %s", jsonOf(srcs))
		}
	})
}

func TestDetachingASourceRemovesItAndAllowsAttachingItAgain(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Detach", "sources")["id"].(string)
	otherFeed := createFeed(t, c, "Other", "sources")["id"].(string)
	list := "/feeds/news/" + feedID + "/sources"
	keep := attach(t, c, feedID, site("keep.example"))
	gone := attach(t, c, feedID, site("gone.example"))
	path := list + "/" + gone["id"].(string)

	t.Run("an attachment of another feed answers 404", func(t *testing.T) {
		id := gone["id"].(string)
		wantNotFound(t, c.do(t, "DELETE", "/feeds/news/"+otherFeed+"/sources/"+id, nil), "source", id)
	})
	t.Run("delete answers exactly {success:true}", func(t *testing.T) {
		wantDeleted(t, c.do(t, "DELETE", path, nil))
	})
	t.Run("the list no longer has it", func(t *testing.T) {
		srcs := wantDataList(t, c.do(t, "GET", list, nil))
		if len(srcs) != 1 || srcs[0]["id"] != keep["id"] {
			t.Fatalf("list after delete %s", jsonOf(srcs))
		}
	})
	t.Run("update and delete of it answer 404", func(t *testing.T) {
		id := gone["id"].(string)
		wantNotFound(t, c.do(t, "PATCH", path, map[string]any{"enabled": true}), "source", id)
		wantNotFound(t, c.do(t, "DELETE", path, nil), "source", id)
	})
	t.Run("attaching the same domain again answers 201 with a new attachment of the same record", func(t *testing.T) {
		again := attach(t, c, feedID, site("gone.example"))
		if again["id"] == gone["id"] || again["sourceId"] != gone["sourceId"] || again["enabled"] != true {
			t.Fatalf("re-attached %s after %s", jsonOf(again), jsonOf(gone))
		}
		srcs := wantDataList(t, c.do(t, "GET", list, nil))
		if len(srcs) != 2 || srcs[0]["id"] != again["id"] {
			t.Fatalf("list after re-attach %s", jsonOf(srcs))
		}
	})
}

func TestSourceRecordsAreSharedButListedPerOrganization(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	acme := as(h, h.Key)
	globex := as(h, h.NewKey("globex"))

	wantRecord := func(t *testing.T, m map[string]any, keys ...string) {
		t.Helper()
		wantKeys(t, "record", m, append([]string{"id", "sourceType", "createdAt"}, keys...)...)
		wantUUID(t, "record.id", m["id"])
		wantTimestamp(t, "record.createdAt", m["createdAt"])
	}

	first := wantDataObject(t, acme.do(t, "POST", "/sources", site("HTTPS://Records.Example/")), http.StatusCreated)
	wantRecord(t, first, "domain")
	if first["sourceType"] != "site" || first["domain"] != "records.example" {
		t.Fatalf("record %s", jsonOf(first))
	}
	id := first["id"].(string)

	t.Run("posting the same identity again answers 200 with the same record", func(t *testing.T) {
		for _, d := range []string{"records.example", "http://RECORDS.example"} {
			again := wantDataObject(t, acme.do(t, "POST", "/sources", site(d)), http.StatusOK)
			if jsonOf(again) != jsonOf(first) {
				t.Fatalf("second post answered %s, first %s", jsonOf(again), jsonOf(first))
			}
		}
	})
	t.Run("a page record echoes its url and siteId", func(t *testing.T) {
		page := wantDataObject(t, acme.do(t, "POST", "/sources", map[string]any{"sourceType": "sitemap", "url": "https://records.example/sitemap.xml", "siteId": id}), http.StatusCreated)
		wantRecord(t, page, "url", "siteId")
		if page["url"] != "https://records.example/sitemap.xml" || page["siteId"] != id || page["id"] == id {
			t.Fatalf("record %s", jsonOf(page))
		}
	})
	t.Run("get answers the record", func(t *testing.T) {
		got := wantDataObject(t, acme.do(t, "GET", "/sources/"+id, nil), http.StatusOK)
		if jsonOf(got) != jsonOf(first) {
			t.Fatalf("get %s, post %s", jsonOf(got), jsonOf(first))
		}
	})
	t.Run("the list is newest first", func(t *testing.T) {
		recs := wantDataList(t, acme.do(t, "GET", "/sources", nil))
		if len(recs) != 2 || recs[0]["sourceType"] != "sitemap" || recs[1]["id"] != id {
			t.Fatalf("list %s", jsonOf(recs))
		}
	})
	t.Run("an unknown record answers 404", func(t *testing.T) {
		missing := randomID()
		wantNotFound(t, acme.do(t, "GET", "/sources/"+missing, nil), "source", missing)
	})
	t.Run("a malformed id answers 400", func(t *testing.T) {
		wantValidation(t, acme.do(t, "GET", "/sources/records.example", nil), "id")
	})
	t.Run("another organization neither lists nor gets it", func(t *testing.T) {
		if recs := wantDataList(t, globex.do(t, "GET", "/sources", nil)); len(recs) != 0 {
			t.Fatalf("globex lists %s", jsonOf(recs))
		}
		wantNotFound(t, globex.do(t, "GET", "/sources/"+id, nil), "source", id)
	})
	t.Run("once it posts the same identity it gets the shared record as its own, 201 then 200", func(t *testing.T) {
		got := wantDataObject(t, globex.do(t, "POST", "/sources", site("records.example")), http.StatusCreated)
		if got["id"] != id || got["domain"] != "records.example" || got["createdAt"] == first["createdAt"] {
			t.Fatalf("globex got %s; want record %s with its own createdAt (acme's is %v)", jsonOf(got), id, first["createdAt"])
		}
		again := wantDataObject(t, globex.do(t, "POST", "/sources", site("records.example")), http.StatusOK)
		if jsonOf(again) != jsonOf(got) {
			t.Fatalf("globex's second post %s, first %s", jsonOf(again), jsonOf(got))
		}
		recs := wantDataList(t, globex.do(t, "GET", "/sources", nil))
		if len(recs) != 1 || recs[0]["id"] != id {
			t.Fatalf("globex lists %s", jsonOf(recs))
		}
		wantDataObject(t, globex.do(t, "GET", "/sources/"+id, nil), http.StatusOK)
	})
	t.Run("attaching a registered domain reuses its record", func(t *testing.T) {
		feedID := createFeed(t, acme, "Records", "records")["id"].(string)
		att := attach(t, acme, feedID, site("records.example"))
		if att["sourceId"] != id {
			t.Fatalf("attachment sourceId %v, want %s", att["sourceId"], id)
		}
	})
	t.Run("invalid bodies answer 400", func(t *testing.T) {
		wantValidation(t, acme.do(t, "POST", "/sources", site("a b")), "domain")
		wantValidation(t, acme.do(t, "POST", "/sources", map[string]any{"domain": "x.example"}), "sourceType")
	})
}

// answer is one response of a concurrent batch.
type answer struct {
	status int
	body   map[string]any
	raw    string
	err    error
}

// sendAtOnce sends the requests concurrently with the harness key. It runs
// off the test goroutine, so it reports instead of failing; the caller checks.
func sendAtOnce(h *servicetest.Harness, method, path string, bodies []string) []answer {
	reqs := make([]raceRequest, len(bodies))
	for i, b := range bodies {
		reqs[i] = raceRequest{method, path, b}
	}
	return race(h, reqs...)
}

func TestConcurrentSourceWritesNeverFailAndAreVisibleWhenAnswered(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Busy", "concurrent writes")["id"].(string)
	path := "/feeds/news/" + feedID + "/sources"
	const n = 20

	t.Run("many different domains added to one feed at once are all attached", func(t *testing.T) {
		bodies := make([]string, n)
		for i := range bodies {
			bodies[i] = fmt.Sprintf(`{"sourceType":"site","domain":"bulk%d.example"}`, i)
		}
		for i, a := range sendAtOnce(h, "POST", path, bodies) {
			if a.err != nil || a.status != http.StatusCreated {
				t.Errorf("add %d answered %d %v: %s", i, a.status, a.err, a.raw)
			}
		}
		if srcs := wantDataList(t, c.do(t, "GET", path, nil)); len(srcs) != n {
			t.Fatalf("%d attachments after %d adds", len(srcs), n)
		}
	})
	t.Run("the same domain added at once is attached once and refused with 409 otherwise", func(t *testing.T) {
		bodies := make([]string, n)
		for i := range bodies {
			bodies[i] = `{"sourceType":"site","domain":"race.example"}`
		}
		count := map[int]int{}
		for _, a := range sendAtOnce(h, "POST", path, bodies) {
			if a.err != nil {
				t.Fatalf("answer %d %v: %s", a.status, a.err, a.raw)
			}
			count[a.status]++
		}
		if count[http.StatusCreated] != 1 || count[http.StatusConflict] != n-1 {
			t.Fatalf("answers by status %v, want one 201 and %d 409", count, n-1)
		}
	})
	t.Run("the same record registered at once is one record, readable by every caller", func(t *testing.T) {
		bodies := make([]string, n)
		for i := range bodies {
			bodies[i] = `{"sourceType":"site","domain":"together.example"}`
		}
		count := map[int]int{}
		ids := map[any]bool{}
		for _, a := range sendAtOnce(h, "POST", "/sources", bodies) {
			if a.err != nil || (a.status != http.StatusCreated && a.status != http.StatusOK) {
				t.Fatalf("answer %d %v: %s", a.status, a.err, a.raw)
			}
			count[a.status]++
			ids[wantObject(t, "data", a.body["data"])["id"]] = true
		}
		if count[http.StatusCreated] != 1 || len(ids) != 1 {
			t.Fatalf("answers by status %v with ids %v, want one 201 and one id", count, ids)
		}
	})
}
