package http_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/service/config"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

func TestSourcesOnNonPublicAddressesAnswer400WhenPrivateNetworksAreNotAllowed(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t, func(c *config.Config) { c.AllowPrivateNetworks = false })
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Private", "targets")["id"].(string)
	siteID := wantDataObject(t, c.do(t, "POST", "/sources", site("example.com")), http.StatusCreated)["id"].(string)
	sitemap := func(url string) map[string]any {
		return map[string]any{"sourceType": "sitemap", "url": url, "siteId": siteID}
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"0.0.0.0", site("0.0.0.0"), "domain"},
		{"127.0.0.1:8080", site("127.0.0.1:8080"), "domain"},
		{"[::ffff:127.0.0.1]", site("[::ffff:127.0.0.1]"), "domain"},
		{"2130706433", site("2130706433"), "domain"},
		{"0x7f000001", site("0x7f000001"), "domain"},
		{"127.1", site("127.1"), "domain"},
		{"169.254.169.254", site("169.254.169.254"), "domain"},
		{"a sitemap on 10.0.0.1", sitemap("http://10.0.0.1/sitemap.xml"), "url"},
		{"a sitemap on [::1]", sitemap("http://[::1]/sitemap.xml"), "url"},
	}
	for _, tc := range cases {
		for _, path := range []string{"/sources", "/feeds/news/" + feedID + "/sources"} {
			t.Run("POST "+path+" with "+tc.name+" answers 400 naming the rule", func(t *testing.T) {
				r := c.do(t, "POST", path, tc.body)
				wantValidation(t, r, tc.field)
				if issue := r.Body["error"].(map[string]any)["details"].(map[string]any)["issue"].(string); !strings.Contains(issue, "public") {
					t.Fatalf("issue %q does not name the public-address rule", issue)
				}
			})
		}
	}
	t.Run("nothing refused was stored", func(t *testing.T) {
		if recs := wantDataList(t, c.do(t, "GET", "/sources", nil)); len(recs) != 1 {
			t.Fatalf("records %s", jsonOf(recs))
		}
		if atts := wantDataList(t, c.do(t, "GET", "/feeds/news/"+feedID+"/sources", nil)); len(atts) != 0 {
			t.Fatalf("attachments %s", jsonOf(atts))
		}
	})
	t.Run("a public address and a name are accepted", func(t *testing.T) {
		attach(t, c, feedID, site("93.184.216.34"))
		attach(t, c, feedID, site("public.example"))
	})
}
