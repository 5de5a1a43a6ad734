package crawl

import (
	"slices"
	"testing"
)

func TestFeedLinksNameTheHubsAndSelfOfAFeed(t *testing.T) {
	const feedURL = "https://news.example/feed.xml"
	for _, tt := range []struct {
		name     string
		header   []string
		body     string
		wantHubs []string
		wantSelf string
	}{
		{
			name: "atom links in the feed's head",
			body: `<feed xmlns="http://www.w3.org/2005/Atom"><link rel="hub" href="https://hub.example/"/>
				<link rel="self" href="https://news.example/atom"/><entry><link rel="hub" href="https://entry.example/"/></entry></feed>`,
			wantHubs: []string{"https://hub.example/"}, wantSelf: "https://news.example/atom",
		},
		{
			name: "rss atom:link elements, the channel's own link left alone",
			body: `<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><link>https://news.example/</link>
				<atom:link rel="hub" href="https://pubsubhubbub.example/"/><atom:link rel="self" href="https://news.example/feed.xml" type="application/rss+xml"/>
				<item><link>https://news.example/a</link></item></channel></rss>`,
			wantHubs: []string{"https://pubsubhubbub.example/"}, wantSelf: feedURL,
		},
		{
			name:     "Link headers come before the body's links, and several rels in one",
			header:   []string{`<https://hub.one/>; rel="hub", <https://news.example/topic>; rel="self"`, `</relative-hub>; rel="hub other"`},
			body:     `<feed xmlns="http://www.w3.org/2005/Atom"><link rel="hub" href="https://hub.one/"/><link rel="hub" href="https://hub.two/"/><link rel="self" href="https://ignored.example/"/></feed>`,
			wantHubs: []string{"https://hub.one/", "https://news.example/relative-hub", "https://hub.two/"}, wantSelf: "https://news.example/topic",
		},
		{
			name:   "a quoted comma in a parameter does not split the link",
			header: []string{`<https://hub.example/>; title="a, b"; rel=hub`},
			body:   `<feed xmlns="http://www.w3.org/2005/Atom"></feed>`, wantHubs: []string{"https://hub.example/"},
		},
		{
			name:   "what is not http(s) is dropped",
			header: []string{`<javascript:alert(1)>; rel="hub"`},
			body:   `<feed xmlns="http://www.w3.org/2005/Atom"><link rel="hub" href="file:///etc/passwd"/></feed>`,
		},
		{
			name: "a feed without hubs names none",
			body: `<rss version="2.0"><channel><link>https://news.example/</link></channel></rss>`,
		},
		{
			name: "a body that is no XML names none",
			body: `{"version": "https://jsonfeed.org/version/1.1"}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseFeedLinks(feedURL, tt.header, []byte(tt.body))
			if !slices.Equal(got.Hubs, tt.wantHubs) || got.Self != tt.wantSelf || got.URL != feedURL {
				t.Fatalf("got hubs %q self %q, want hubs %q self %q", got.Hubs, got.Self, tt.wantHubs, tt.wantSelf)
			}
		})
	}
}
