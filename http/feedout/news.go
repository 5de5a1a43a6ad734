package feedout

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Media types of the news outputs.
const (
	AtomType     = "application/atom+xml; charset=utf-8"
	JSONFeedType = "application/feed+json; charset=utf-8"
)

// generator names the service in both formats.
const generator = "feedsvc"

// Channel is what a news output says about its feed.
type Channel struct {
	FeedID      uuid.UUID
	Title       string
	Description string
	// SelfURL is the absolute address the output was fetched from.
	SelfURL string
	// Updated is when the feed or its newest item last changed.
	Updated time.Time
}

// NewsItem is one item as the outputs render it: the API's current shape
// with its source block (for the author).
type NewsItem = shape.NewsJSON

// title is the item's title, or its address when it has none: Atom
// requires a title, and readers show an empty one as a blank line.
func title(it NewsItem) string {
	if it.Title != "" {
		return it.Title
	}
	if it.URL != "" {
		return it.URL
	}
	return it.ID
}

// author is who published the item when its source says (platform posts);
// web pages name no author.
func author(it NewsItem) string {
	if it.Source != nil && it.Source.Publisher != nil {
		return strings.TrimSpace(it.Source.Publisher.Name)
	}
	return ""
}

// published is when the item was published, or when the feed got it when
// the page gave no date.
func published(it NewsItem) string {
	if it.PublishedAt != "" {
		return it.PublishedAt
	}
	return it.CreatedAt
}

type atomFeed struct {
	XMLName   xml.Name      `xml:"http://www.w3.org/2005/Atom feed"`
	ID        string        `xml:"id"`
	Title     atomText      `xml:"title"`
	Subtitle  *atomText     `xml:"subtitle,omitempty"`
	Updated   string        `xml:"updated"`
	Links     []atomLink    `xml:"link"`
	Author    atomPerson    `xml:"author"`
	Generator atomGenerator `xml:"generator"`
	Entries   []atomEntry   `xml:"entry"`
}

type atomText struct {
	Type  string `xml:"type,attr"`
	Value string `xml:",chardata"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomPerson struct {
	Name string `xml:"name"`
}

type atomGenerator struct {
	Value string `xml:",chardata"`
}

type atomEntry struct {
	ID        string      `xml:"id"`
	Title     atomText    `xml:"title"`
	Updated   string      `xml:"updated"`
	Published string      `xml:"published,omitempty"`
	Author    *atomPerson `xml:"author,omitempty"`
	Links     []atomLink  `xml:"link"`
	Summary   *atomText   `xml:"summary,omitempty"`
	Content   *atomText   `xml:"content,omitempty"`
}

// Atom renders items (newest first) as an Atom 1.0 document.
func Atom(ch Channel, items []NewsItem) ([]byte, error) {
	doc := atomFeed{
		ID:      "urn:uuid:" + ch.FeedID.String(),
		Title:   atomText{Type: "text", Value: ch.Title},
		Updated: shape.Timestamp(ch.Updated),
		Links:   []atomLink{{Rel: "self", Type: "application/atom+xml", Href: ch.SelfURL}},
		// Entries name their author only when the source does; the feed's
		// author stands for the rest, as RFC 4287 section 4.1.1 requires.
		Author:    atomPerson{Name: ch.Title},
		Generator: atomGenerator{Value: generator},
		Entries:   make([]atomEntry, 0, len(items)),
	}
	if ch.Description != "" {
		doc.Subtitle = &atomText{Type: "text", Value: ch.Description}
	}
	for _, it := range items {
		e := atomEntry{
			ID:        "urn:uuid:" + it.ID,
			Title:     atomText{Type: "text", Value: title(it)},
			Updated:   it.UpdatedAt,
			Published: it.PublishedAt,
		}
		if a := author(it); a != "" {
			e.Author = &atomPerson{Name: a}
		}
		if it.URL != "" {
			e.Links = append(e.Links, atomLink{Rel: "alternate", Type: "text/html", Href: it.URL})
		}
		if it.ImageURL != "" {
			e.Links = append(e.Links, atomLink{Rel: "enclosure", Type: imageType(it.ImageURL), Href: it.ImageURL})
		}
		if it.Description != "" {
			e.Summary = &atomText{Type: "text", Value: it.Description}
		}
		if it.URL == "" {
			// An entry without an alternate link must have content (RFC 4287
			// section 4.1.2).
			e.Content = &atomText{Type: "text", Value: firstOf(it.Description, title(it))}
		}
		doc.Entries = append(doc.Entries, e)
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode the Atom feed %s: %w", ch.FeedID, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// imageType guesses an image's media type from its address; empty when
// the address does not say (the type is optional).
func imageType(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	t := mime.TypeByExtension(strings.ToLower(path.Ext(u)))
	if !strings.HasPrefix(t, "image/") {
		return ""
	}
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return t
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

type jsonFeed struct {
	Version     string       `json:"version"`
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	FeedURL     string       `json:"feed_url"`
	Authors     []jsonAuthor `json:"authors"`
	Items       []jsonItem   `json:"items"`
}

type jsonAuthor struct {
	Name string `json:"name"`
}

type jsonItem struct {
	ID            string       `json:"id"`
	URL           string       `json:"url,omitempty"`
	Title         string       `json:"title,omitempty"`
	ContentText   string       `json:"content_text"`
	Summary       string       `json:"summary,omitempty"`
	Image         string       `json:"image,omitempty"`
	DatePublished string       `json:"date_published"`
	DateModified  string       `json:"date_modified"`
	Authors       []jsonAuthor `json:"authors,omitempty"`
}

// JSONFeed renders items (newest first) as a JSON Feed 1.1 document.
func JSONFeed(ch Channel, items []NewsItem) ([]byte, error) {
	doc := jsonFeed{
		Version: "https://jsonfeed.org/version/1.1", Title: ch.Title, Description: ch.Description,
		FeedURL: ch.SelfURL, Authors: []jsonAuthor{{Name: ch.Title}}, Items: make([]jsonItem, 0, len(items)),
	}
	for _, it := range items {
		ji := jsonItem{
			ID: it.ID, URL: it.URL, Title: it.Title, Summary: it.Description, Image: it.ImageURL,
			// Every item must carry content_html or content_text (JSON Feed
			// 1.1, items); the service keeps no article body, so the text is
			// the summary, or the title.
			ContentText:   firstOf(it.Description, title(it)),
			DatePublished: published(it), DateModified: it.UpdatedAt,
		}
		if a := author(it); a != "" {
			ji.Authors = []jsonAuthor{{Name: a}}
		}
		doc.Items = append(doc.Items, ji)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode the JSON feed %s: %w", ch.FeedID, err)
	}
	return buf.Bytes(), nil
}
