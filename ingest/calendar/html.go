package calendar

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/extract"
)

// fromHTML reads a page's schema.org events from its JSON-LD, or from its
// Microdata when no JSON-LD block holds an event, and the calendars it
// links to. Events without a readable start are dropped; from is the
// start of the expansion window.
func fromHTML(d document.Document, pageURL *url.URL, from time.Time) (drafts []draft, dropped int, calendars []string, err error) {
	body := extract.ToUTF8(d.Body, d.ContentType)
	if !mayHold(body) {
		return nil, 0, nil, nil
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, 0, nil, fmt.Errorf("%w: %w", extract.ErrUnparsable, err)
	}
	base := extract.DocumentBase(doc, pageURL)
	found, ids := extract.JSONLDNodes(extract.JSONLDScripts(doc), isEventType)
	textOnly := false
	if len(found) == 0 && len(doc.Nodes) > 0 {
		found, ids = extract.LDNodes(microdata(doc.Nodes[0]), isEventType)
		// Microdata values are the text of elements (descriptions are
		// escaped as every plain-text description is, see ldDescription).
		textOnly = true
	}
	g := graph{ids: ids, base: base, from: from}
	g.inherit(found)
	drafts = make([]draft, 0, len(found))
	for _, n := range found {
		dr, ok := g.draft(n)
		if !ok {
			dropped++
			continue
		}
		if textOnly {
			dr.title = textToHTML(dr.title)
		}
		drafts = append(drafts, dr)
	}
	return drafts, dropped, calendarLinks(doc, base), nil
}

// calendarLinks are the iCalendar files a page links to: .ics files,
// webcal: subscriptions (fetched over https), links typed text/calendar,
// and the ?ical=1 exports of WordPress' The Events Calendar.
func calendarLinks(doc *goquery.Document, base *url.URL) []string {
	var out []string
	doc.Find("a[href], link[href]").Each(func(_ int, s *goquery.Selection) {
		href := strings.TrimSpace(s.AttrOr("href", ""))
		typed := strings.HasPrefix(strings.ToLower(s.AttrOr("type", "")), "text/calendar")
		if u := calendarURL(base, href, typed); u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	})
	return out
}

func calendarURL(base *url.URL, href string, typed bool) string {
	lower := strings.ToLower(href)
	// Most links of a page are not calendars: they are passed over before
	// being parsed.
	if !typed && !strings.Contains(lower, ".ics") && !strings.Contains(lower, "ical=") && !strings.HasPrefix(lower, "webcal:") {
		return ""
	}
	if strings.HasPrefix(lower, "webcal:") {
		href = "https:" + href[7:]
		typed = true
	}
	abs := extract.Resolve(base, href)
	if abs == "" {
		return ""
	}
	u, err := url.Parse(abs)
	if err != nil {
		return ""
	}
	ics := strings.EqualFold(path.Ext(u.Path), ".ics")
	tec := u.Query().Get("ical") == "1"
	if !typed && !ics && !tec {
		return ""
	}
	return abs
}
