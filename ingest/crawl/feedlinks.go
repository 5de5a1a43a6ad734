package crawl

import (
	"context"
	"encoding/xml"
	"io"
	"net/url"
	"strings"

	"github.com/feedsvc/feedsvc/ingest/document"
)

// FeedLinks is what a feed says about where it is published: the WebSub
// hubs it names and its self URL (W3C WebSub, "Discovery"), from the
// response's Link headers and from the feed's own link elements (Atom's
// <link rel="hub">, RSS's <atom:link rel="hub">). Headers come first, as
// the recommendation has it. Self is the topic a hub knows the feed by.
type FeedLinks struct {
	// URL is the feed's URL as fetched (after redirects).
	URL  string
	Hubs []string
	Self string
}

// feedObserverKey marks a context whose caller wants the links of every
// feed read under it.
type feedObserverKey struct{}

// WithFeedObserver returns a context under which every feed the client
// reads in full (not answered 304) is reported to observe with its links,
// whether or not it names a hub; observe must be safe for concurrent use.
// The connector that knows which source it reads uses it, so the client
// need not.
func WithFeedObserver(ctx context.Context, observe func(FeedLinks)) context.Context {
	return context.WithValue(ctx, feedObserverKey{}, observe)
}

// observeFeed reports a feed read in full to ctx's observer, if any.
func observeFeed(ctx context.Context, resp *Response) {
	observe, _ := ctx.Value(feedObserverKey{}).(func(FeedLinks))
	if observe == nil {
		return
	}
	observe(ParseFeedLinks(resp.URL, resp.Link, resp.Body))
}

// maxLinkTokens bounds how far into a feed its links are looked for: they
// belong to the feed's head, before its entries.
const maxLinkTokens = 2000

// ParseFeedLinks reads the hubs and self URL of the feed at feedURL from
// its Link header values and body; relative references are resolved
// against feedURL, and what is not http(s) is dropped.
func ParseFeedLinks(feedURL string, header []string, body []byte) FeedLinks {
	out := FeedLinks{URL: feedURL}
	base, _ := url.Parse(feedURL)
	var hubs []string
	self := ""
	for _, l := range parseLinkHeader(header) {
		switch {
		case l.rels["hub"]:
			hubs = append(hubs, l.target)
		case l.rels["self"] && self == "":
			self = l.target
		}
	}
	bodyHubs, bodySelf := bodyLinks(body)
	hubs = append(hubs, bodyHubs...)
	if self == "" {
		self = bodySelf
	}
	seen := map[string]bool{}
	for _, h := range hubs {
		if u := absolute(base, h); u != "" && !seen[u] {
			seen[u] = true
			out.Hubs = append(out.Hubs, u)
		}
	}
	out.Self = absolute(base, self)
	return out
}

// bodyLinks scans the feed's head for link elements with rel hub or self,
// stopping at the first entry (item/entry) or after maxLinkTokens tokens.
// Atom links and RSS atom:link share the local name "link" and an href
// attribute; RSS's own <link> has no rel and is skipped.
func bodyLinks(body []byte) (hubs []string, self string) {
	dec := xml.NewDecoder(strings.NewReader(string(body)))
	dec.Strict = false
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for i := 0; i < maxLinkTokens; i++ {
		tok, err := dec.Token()
		if err != nil {
			return hubs, self
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch strings.ToLower(se.Name.Local) {
		case "item", "entry":
			return hubs, self
		case "link":
		default:
			continue
		}
		var rel, href string
		for _, a := range se.Attr {
			switch strings.ToLower(a.Name.Local) {
			case "rel":
				rel = a.Value
			case "href":
				href = strings.TrimSpace(a.Value)
			}
		}
		if href == "" {
			continue
		}
		for _, r := range strings.Fields(strings.ToLower(rel)) {
			switch {
			case r == "hub":
				hubs = append(hubs, href)
			case r == "self" && self == "":
				self = href
			}
		}
	}
	return hubs, self
}

// linkValue is one link of a Link header.
type linkValue struct {
	target string
	rels   map[string]bool
}

// parseLinkHeader reads Link header values (RFC 8288): comma-separated
// `<target>; param=value` links, of which only rel matters here. A
// malformed link is skipped.
func parseLinkHeader(values []string) []linkValue {
	var out []linkValue
	for _, v := range values {
		for len(v) > 0 {
			start := strings.IndexByte(v, '<')
			if start < 0 {
				break
			}
			end := strings.IndexByte(v[start:], '>')
			if end < 0 {
				break
			}
			l := linkValue{target: strings.TrimSpace(v[start+1 : start+end]), rels: map[string]bool{}}
			v = v[start+end+1:]
			// Parameters run to the next link: a comma outside quotes.
			params, rest := splitParams(v)
			v = rest
			for _, p := range params {
				name, value, ok := strings.Cut(p, "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(name), "rel") {
					continue
				}
				for _, r := range strings.Fields(strings.ToLower(strings.Trim(strings.TrimSpace(value), `"`))) {
					l.rels[r] = true
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// splitParams splits `; a=b; c="d, e", <next>...` into its parameters and
// what follows the comma that ends them.
func splitParams(v string) (params []string, rest string) {
	inQuote := false
	cur := strings.Builder{}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			inQuote = !inQuote
			cur.WriteByte(c)
		case c == ';' && !inQuote:
			if s := strings.TrimSpace(cur.String()); s != "" {
				params = append(params, s)
			}
			cur.Reset()
		case c == ',' && !inQuote:
			if s := strings.TrimSpace(cur.String()); s != "" {
				params = append(params, s)
			}
			return params, v[i+1:]
		default:
			cur.WriteByte(c)
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		params = append(params, s)
	}
	return params, ""
}

// PushedCandidates lists the entries of a feed body that a WebSub hub
// pushed for the feed at feedURL, as FeedCandidates lists a fetched one.
func PushedCandidates(feedURL string, body []byte) ([]Candidate, error) {
	return feedCandidates(&Response{Document: document.Document{URL: feedURL, Body: body}})
}
