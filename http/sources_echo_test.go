package http_test

import (
	"testing"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

func TestEachOrganizationsAttachmentEchoesTheSiteIdItSubmitted(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	type org struct{ key, feed, site string }
	var orgs []org
	for _, name := range []string{"alpha", "beta"} {
		key := h.NewKey(name)
		auth := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
		feed := h.DoWith("POST", "/feeds/news", `{"name":"n","description":"d"}`, auth).MustStatus(t, 201).Data()["id"].(string)
		// Each organization uses a site of its own for the shared sitemap.
		site := h.DoWith("POST", "/feeds/news/"+feed+"/sources", `{"sourceType":"site","domain":"`+name+`.example"}`, auth).
			MustStatus(t, 201).Data()["sourceId"].(string)
		orgs = append(orgs, org{key, feed, site})
	}
	var sitemapRecord string
	for _, o := range orgs {
		auth := map[string]string{"Authorization": "Bearer " + o.key, "Content-Type": "application/json"}
		r := h.DoWith("POST", "/feeds/news/"+o.feed+"/sources",
			`{"sourceType":"sitemap","url":"https://shared.example/sitemap.xml","siteId":"`+o.site+`"}`, auth).MustStatus(t, 201).Data()
		details := r["sourceDetails"].(map[string]any)
		if details["siteId"] != o.site {
			t.Fatalf("sourceDetails.siteId %v, want the submitted %s", details["siteId"], o.site)
		}
		if sitemapRecord == "" {
			sitemapRecord = r["sourceId"].(string)
		} else if r["sourceId"] != sitemapRecord {
			t.Fatalf("the same sitemap URL got two records %s and %v", sitemapRecord, r["sourceId"])
		}
	}
}
