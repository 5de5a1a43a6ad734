package extract

import (
	"testing"
	"time"
)

const rssXML = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">
<channel>
  <title>Example News</title><link>https://example.com/</link>
  <item>
    <title>Storm &amp; flood hit the coast</title>
    <link>https://example.com/news/storm-hits-coast</link>
    <description><![CDATA[<p>Thousands were <b>evacuated</b>.</p><p>More&nbsp;soon.</p><script>track()</script>]]></description>
    <pubDate>Fri, 03 May 2024 08:15:30 +0200</pubDate>
    <media:content url="https://example.com/img/storm.jpg" medium="image"/>
  </item>
  <item>
    <title>Relative link with enclosure</title>
    <link>/news/relative-story</link>
    <enclosure url="/img/rel.png" type="image/png" length="10"/>
  </item>
  <item>
    <title>Permalink GUID only</title>
    <guid isPermaLink="true">https://example.com/news/guid-story</guid>
    <description>Plain &amp; simple</description>
  </item>
  <item><title>No link at all</title></item>
</channel></rss>`

const atomXML = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example Atom</title>
  <link href="https://example.org/"/>
  <updated>2024-05-03T10:00:00Z</updated>
  <entry>
    <title type="html">Atom &lt;em&gt;entry&lt;/em&gt;</title>
    <link rel="alternate" href="https://example.org/2024/05/atom-entry"/>
    <id>tag:example.org,2024:1</id>
    <updated>2024-05-03T10:00:00Z</updated>
    <published>2024-05-03T09:00:00-01:00</published>
    <summary type="html">&lt;p&gt;Summary with &lt;img src="/img/a.jpg"&gt; picture&lt;/p&gt;</summary>
  </entry>
  <entry>
    <title>Updated only</title>
    <link href="https://example.org/2024/05/updated-only"/>
    <id>tag:example.org,2024:2</id>
    <updated>2024-05-04T10:00:00Z</updated>
  </entry>
</feed>`

func TestFeed(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []FeedEntry
	}{
		{
			name: "RSS items give links, stripped descriptions, media images and UTC dates",
			body: rssXML,
			want: []FeedEntry{
				{
					URL: "https://example.com/news/storm-hits-coast", Title: "Storm & flood hit the coast",
					Description: "Thousands were evacuated. More soon.", ImageURL: "https://example.com/img/storm.jpg",
					PublishedAt: time.Date(2024, 5, 3, 6, 15, 30, 0, time.UTC),
				},
				{URL: "https://example.com/news/relative-story", Title: "Relative link with enclosure", ImageURL: "https://example.com/img/rel.png"},
				{URL: "https://example.com/news/guid-story", Title: "Permalink GUID only", Description: "Plain & simple"},
			},
		},
		{
			name: "Atom entries use published, else updated, and the first image of the summary",
			body: atomXML,
			want: []FeedEntry{
				{
					URL: "https://example.org/2024/05/atom-entry", Title: "Atom entry", Description: "Summary with picture",
					ImageURL: "https://example.org/img/a.jpg", PublishedAt: time.Date(2024, 5, 3, 10, 0, 0, 0, time.UTC),
				},
				{URL: "https://example.org/2024/05/updated-only", Title: "Updated only", PublishedAt: time.Date(2024, 5, 4, 10, 0, 0, 0, time.UTC)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Feed([]byte(tt.body))
			if err != nil {
				t.Fatalf("Feed: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d entries %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.URL != w.URL || g.Title != w.Title || g.Description != w.Description || g.ImageURL != w.ImageURL || !g.PublishedAt.Equal(w.PublishedAt) {
					t.Errorf("entry %d = %+v\nwant %+v", i, g, w)
				}
				if !g.PublishedAt.IsZero() && g.PublishedAt.Location() != time.UTC {
					t.Errorf("entry %d date not in UTC: %v", i, g.PublishedAt)
				}
			}
		})
	}
}

func TestFeedRejectsNonFeeds(t *testing.T) {
	if _, err := Feed([]byte("<html><body>hello</body></html>")); err == nil {
		t.Error("want an error for an HTML page")
	}
}

func TestStripTags(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text is only trimmed", "  hello   world ", "hello world"},
		{"block tags become spaces", "<p>a</p><p>b</p>", "a b"},
		{"inline tags vanish", "x<b>y</b>z", "xyz"},
		{"script and style content is dropped", "a<script>var x = '<p>';</script><style>p{}</style>b", "ab"},
		{"entities are decoded", "Tom &amp; Jerry&nbsp;&#8212; again", "Tom & Jerry — again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StripTags(tt.in); got != tt.want {
				t.Errorf("StripTags(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
