package fakeweb

import (
	"testing"

	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// The benchmarks measure a web of different stories: were two articles
// copies by the service's own rule, a run would add one item and record
// thousands of copies of it (it did, while every page carried one
// repeated sentence).
func TestNoTwoArticlesAreCopiesByTheServicesRule(t *testing.T) {
	pages := map[string]string{
		"one site, next article": "127.0.1.1",
		"another site":           "127.0.1.2",
	}
	a := nearcopy.Page{URL: "http://127.0.1.1/articles/1", Title: "Story 1 of 127.0.1.1", Signature: nearcopy.Sign("Story 1 of 127.0.1.1", storyText("127.0.1.1", 1))}
	for name, host := range pages {
		t.Run(name, func(t *testing.T) {
			b := nearcopy.Page{URL: "http://" + host + "/articles/2", Title: "Story 2 of " + host, Signature: nearcopy.Sign("Story 2 of "+host, storyText(host, 2))}
			if v := nearcopy.Compare(a, b); v.Copy || v.Similarity > 0.2 {
				t.Fatalf("two articles compare as %+v", v)
			}
		})
	}
	if storyText("127.0.1.1", 1) != storyText("127.0.1.1", 1) {
		t.Fatal("an article's text changes between requests, and with it its ETag")
	}
}
