package http

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/transport"
)

// OPML 2.0 (http://opml.org/spec2.opml), the format feed readers export
// and import subscription lists in: GET /feeds/news/{feedId}/sources.opml
// is a news feed's sources as one, and a POST of one to the same address
// attaches each outline's address as a source, answering per outline what
// happened (docs/api-notes.md, "OPML").
const (
	// opmlMaxOutlines bounds the outlines an import reads (nested ones
	// counted): a reader's export of a few hundred subscriptions fits.
	opmlMaxOutlines = 1000
	// opmlMaxDepth bounds how deep elements nest (opml, body and nine
	// levels of categories): readers nest one or two.
	opmlMaxDepth = 12
	// opmlContentType is what the export is served as: the media type
	// OPML files commonly go by; readers' importers read the document
	// whatever its type.
	opmlContentType = "text/x-opml; charset=utf-8"
)

// opmlSourceType is the attribute the export adds to an outline whose
// source kind its addresses do not tell (an index page), so that importing
// the export makes the same kind again.
const opmlSourceType = "feedsvcSourceType"

// ---- export -------------------------------------------------------------

type opmlDoc struct {
	XMLName xml.Name      `xml:"opml"`
	Version string        `xml:"version,attr"`
	Head    opmlHead      `xml:"head"`
	Body    []opmlOutline `xml:"body>outline"`
}

type opmlHead struct {
	Title       string `xml:"title"`
	DateCreated string `xml:"dateCreated"`
}

type opmlOutline struct {
	Type       string `xml:"type,attr"`
	Text       string `xml:"text,attr"`
	Title      string `xml:"title,attr"`
	XMLURL     string `xml:"xmlUrl,attr"`
	HTMLURL    string `xml:"htmlUrl,attr"`
	SourceType string `xml:"feedsvcSourceType,attr,omitempty"`
}

func (h *handlers) exportNewsSourcesOPML(c *fiber.Ctx) error {
	ref, err := newsFeed(c)
	if err != nil {
		return err
	}
	feed, err := h.Reads.Feeds.Feed(c.UserContext(), ref.Kind, ref.Org, ref.FeedID)
	if err != nil {
		return err
	}
	rows, err := h.Reads.Feeds.FeedSources(c.UserContext(), ref.Kind, ref.Org, ref.FeedID)
	if err != nil {
		return err
	}
	doc := opmlDoc{Version: "2.0", Head: opmlHead{Title: feed.Name, DateCreated: time.Now().UTC().Format(time.RFC1123Z)}}
	// Oldest first: the order they were attached in, which an import of
	// the document keeps.
	for i := len(rows) - 1; i >= 0; i-- {
		a := rows[i].Attachment()
		o, err := h.outlineOf(c, ref.Org, a.SourceID, a.Details)
		if err != nil {
			return err
		}
		doc.Body = append(doc.Body, o)
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("render the OPML of feed %s: %w", ref.FeedID, err)
	}
	c.Set(fiber.HeaderContentType, opmlContentType)
	return c.Status(fiber.StatusOK).Send(append([]byte(xml.Header), append(out, '\n')...))
}

// outlineOf is a source as an outline: htmlUrl the site or the account's
// profile, xmlUrl the address the crawler reads (the sitemap, the index
// page; for a site the feed the crawler found on it, else its home page).
func (h *handlers) outlineOf(c *fiber.Ctx, org, sourceID uuid.UUID, d domain.SourceDetails) (opmlOutline, error) {
	o := opmlOutline{Type: "rss"}
	switch d.SourceType {
	case domain.SourceSite:
		o.HTMLURL = "https://" + d.Domain + "/"
		o.XMLURL, o.Text = o.HTMLURL, d.Domain
		if h.DiscoveredFeed != nil {
			feed, ok, err := h.DiscoveredFeed(c.UserContext(), org, sourceID)
			if err != nil {
				return o, err
			}
			if ok {
				o.XMLURL = feed
			}
		}
	case domain.SourceSitemap, domain.SourceSiteIndexPage:
		o.XMLURL, o.Text = d.URL, d.URL
		o.HTMLURL = siteOfURL(d.URL)
		if d.SiteID != nil {
			row, err := h.Reads.Sources.Source(c.UserContext(), org, *d.SiteID)
			if err == nil && row.View().Details.Domain != "" {
				o.HTMLURL = "https://" + row.View().Details.Domain + "/"
			} else if err != nil && envelope.Status(err) != fiber.StatusNotFound {
				return o, err
			}
		}
		if d.SourceType == domain.SourceSiteIndexPage {
			o.SourceType = string(d.SourceType)
		}
	default:
		name := d.Username
		if d.SourceType == domain.SourceFacebook {
			name = d.Identifier
		}
		o.HTMLURL = domain.ProfileURL(d.SourceType, name)
		o.XMLURL, o.Text = o.HTMLURL, string(d.SourceType)+" "+name
	}
	o.Title = o.Text
	return o, nil
}

// siteOfURL is the home page of the host of a URL.
func siteOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + u.Host + "/"
}

// platformHosts are the hosts of the platforms' profile pages, without
// "www." and "m.".
var platformHosts = map[string]domain.SourceType{
	"instagram.com": domain.SourceInstagram, "tiktok.com": domain.SourceTikTok,
	"x.com": domain.SourceTwitter, "twitter.com": domain.SourceTwitter, "facebook.com": domain.SourceFacebook,
}

// ---- import -------------------------------------------------------------

// opmlEntry is an outline of an imported document that names an address.
type opmlEntry struct {
	Text, XMLURL, HTMLURL, SourceType string
}

// opmlResultJSON is what became of one outline.
type opmlResultJSON struct {
	// Outline is the outline's place among those that name an address,
	// from 1, in document order.
	Outline int    `json:"outline"`
	Text    string `json:"text,omitempty"`
	XMLURL  string `json:"xmlUrl,omitempty"`
	HTMLURL string `json:"htmlUrl,omitempty"`
	// Status is attached, alreadyAttached, refused or unavailable.
	Status        string                `json:"status"`
	AttachmentID  string                `json:"attachmentId,omitempty"`
	SourceID      string                `json:"sourceId,omitempty"`
	SourceDetails *domain.SourceDetails `json:"sourceDetails,omitempty"`
	// Field and Reason say why an outline was refused or unavailable.
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
}

type opmlImportJSON struct {
	Attached        int              `json:"attached"`
	AlreadyAttached int              `json:"alreadyAttached"`
	Refused         int              `json:"refused"`
	Unavailable     int              `json:"unavailable"`
	Outlines        []opmlResultJSON `json:"outlines"`
}

func (h *handlers) importNewsSourcesOPML(c *fiber.Ctx) error {
	ref, err := newsFeed(c)
	if err != nil {
		return err
	}
	if !opmlMediaType(c.Get(fiber.HeaderContentType)) {
		return &envelope.Error{Status: fiber.StatusUnsupportedMediaType, Message: "body: Content-Type must be text/x-opml, application/xml or text/xml",
			Field: "Content-Type", Issue: "must be text/x-opml, application/xml or text/xml"}
	}
	raw, err := uncompressedBody(c)
	if err != nil {
		return err
	}
	entries, err := readOPML(raw)
	if err != nil {
		return err
	}
	// The feed first, so that a missing feed (or another organization's)
	// is a 404 that stored nothing.
	if _, err := h.Reads.Feeds.Feed(c.UserContext(), ref.Kind, ref.Org, ref.FeedID); err != nil {
		return err
	}
	scope := transport.IdempotencyScope(c)
	out, err := commands.Visible(c.UserContext(), h.Waiter, func(ctx context.Context) (opmlImportJSON, commands.Result, error) {
		var all commands.Result
		res := opmlImportJSON{Outlines: make([]opmlResultJSON, 0, len(entries))}
		for i, e := range entries {
			// Each outline runs in its own part of the request's scope: a
			// repeat of the request finds each one's events again.
			cmds := h.Commands.Idempotent(scope.Sub("opml-outline-" + strconv.Itoa(i)))
			r, done, err := h.importOutline(ctx, cmds, ref, e)
			if err != nil {
				return res, all, err
			}
			all = all.Merge(done)
			r.Outline, r.Text, r.XMLURL, r.HTMLURL = i+1, e.Text, e.XMLURL, e.HTMLURL
			switch r.Status {
			case "attached":
				res.Attached++
			case "alreadyAttached":
				res.AlreadyAttached++
			case "refused":
				res.Refused++
			default:
				res.Unavailable++
			}
			res.Outlines = append(res.Outlines, r)
		}
		return res, all, nil
	})
	if err != nil {
		return err
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

// importOutline attaches an outline's source through the add-source
// command. A refusal of the outline is its result; an error is a failure
// of the whole request.
func (h *handlers) importOutline(ctx context.Context, cmds *commands.Handler, ref commands.FeedRef, e opmlEntry) (opmlResultJSON, commands.Result, error) {
	req, res, err := h.outlineRequest(ctx, cmds, ref.Org, e)
	var att domain.Attachment
	if err == nil {
		var attached commands.Result
		att, attached, err = cmds.AttachSource(ctx, commands.AttachSource{FeedRef: ref, Request: req})
		res = res.Merge(attached)
	}
	if err == nil {
		d := att.Details
		return opmlResultJSON{Status: "attached", AttachmentID: att.ID.String(), SourceID: att.SourceID.String(), SourceDetails: &d}, res, nil
	}
	answer := envelope.Classify(err)
	switch {
	case answer.Status == fiber.StatusConflict:
		return opmlResultJSON{Status: "alreadyAttached", Reason: answer.Message}, res, nil
	case errors.Is(err, domain.ErrSourceUnavailable):
		return opmlResultJSON{Status: "unavailable", Reason: answer.Message}, res, nil
	case answer.Status >= 400 && answer.Status < 500:
		return opmlResultJSON{Status: "refused", Field: answer.Field, Reason: answer.Message}, res, nil
	}
	return opmlResultJSON{}, res, err
}

// outlineRequest is the source an outline names, as an add-source body
// would name it: a platform account for a profile page, a sitemap for an
// address whose file is named like one (attached with its site, which is
// registered for it), an index page when the export said so, and else the
// site of the address's host (the crawler finds its feeds and sitemaps).
func (h *handlers) outlineRequest(ctx context.Context, cmds *commands.Handler, org uuid.UUID, e opmlEntry) (domain.SourceRequest, commands.Result, error) {
	raw := e.XMLURL
	if raw == "" {
		raw = e.HTMLURL
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return domain.SourceRequest{}, commands.Result{}, envelope.BadRequest("xmlUrl", "must be an absolute http or https URL")
	}
	req := domain.SourceRequest{Targets: h.targets}
	host := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(u.Hostname()), "www."), "m.")
	if t, ok := platformHosts[host]; ok {
		name := strings.Trim(u.Path, "/")
		if name == "" || strings.Contains(name, "/") {
			return req, commands.Result{}, envelope.BadRequest("xmlUrl", "must be an account's profile page on "+host)
		}
		req.SourceType = string(t)
		if t == domain.SourceFacebook {
			page := "page"
			req.FacebookType, req.Identifier = &page, &name
		} else {
			req.Username = &name
		}
		return req, commands.Result{}, nil
	}
	domainName := u.Host
	req.SourceType, req.Domain = string(domain.SourceSite), &domainName
	file := strings.ToLower(u.Path[strings.LastIndex(u.Path, "/")+1:])
	isSitemap := strings.Contains(file, "sitemap") && (strings.HasSuffix(file, ".xml") || strings.HasSuffix(file, ".xml.gz"))
	if !isSitemap && e.SourceType != string(domain.SourceSiteIndexPage) {
		return req, commands.Result{}, nil
	}
	// The page source names its site by id, which the attach looks up
	// in the read model: the registration must be visible first.
	site, err := commands.Visible(ctx, h.Waiter, func(ctx context.Context) (commands.Registered, commands.Result, error) {
		return cmds.RegisterSource(ctx, commands.RegisterSource{Org: org, Request: req})
	})
	if err != nil {
		return req, commands.Result{}, err
	}
	pageType, siteID, page := domain.SourceSitemap, site.ID.String(), u.String()
	if !isSitemap {
		pageType = domain.SourceSiteIndexPage
	}
	return domain.SourceRequest{SourceType: string(pageType), URL: &page, SiteID: &siteID, Targets: h.targets}, commands.Result{}, nil
}

// opmlMediaType accepts the types OPML is sent as.
func opmlMediaType(header string) bool {
	mediaType, params, err := mime.ParseMediaType(header)
	if err != nil {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	switch mediaType {
	case "text/x-opml", "application/xml", "text/xml", "application/opml+xml", "text/opml":
		return true
	}
	return false
}

// readOPML reads an OPML document's outlines that name an address,
// flattening categories, in document order. It refuses with 400 what is
// not an OPML document, a document with a DOCTYPE (entity declarations are
// how a small document expands into a huge one), elements nested deeper
// than opmlMaxDepth, more than opmlMaxOutlines outlines, and a document
// naming no address.
func readOPML(raw []byte) ([]opmlEntry, error) {
	dec := xml.NewDecoder(bytes.NewReader(raw))
	// Only the XML entities are known; any other is an error, never
	// expanded. An encoding other than UTF-8 is refused.
	dec.Strict = true
	dec.CharsetReader = func(label string, _ io.Reader) (io.Reader, error) {
		return nil, fmt.Errorf("encoding %q is not UTF-8", label)
	}
	var entries []opmlEntry
	depth, outlines, sawRoot, inBody := 0, 0, false, false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, envelope.BadRequest("body", "must be an OPML document: "+err.Error())
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, envelope.BadRequest("body", "must not hold a DOCTYPE or other declarations")
		case xml.StartElement:
			depth++
			if depth > opmlMaxDepth {
				return nil, envelope.BadRequest("body", "nests elements deeper than "+strconv.Itoa(opmlMaxDepth)+" levels")
			}
			switch {
			case depth == 1:
				if t.Name.Local != "opml" {
					return nil, envelope.BadRequest("body", "must be an OPML document (its root element is <opml>)")
				}
				sawRoot = true
			case depth == 2 && t.Name.Local == "body":
				inBody = true
			case inBody && t.Name.Local == "outline":
				outlines++
				if outlines > opmlMaxOutlines {
					return nil, envelope.BadRequest("body", "holds more than "+strconv.Itoa(opmlMaxOutlines)+" outlines")
				}
				if e := entryOf(t); e.XMLURL != "" || e.HTMLURL != "" {
					entries = append(entries, e)
				}
			}
		case xml.EndElement:
			if depth == 2 && t.Name.Local == "body" {
				inBody = false
			}
			depth--
		}
	}
	if !sawRoot {
		return nil, envelope.BadRequest("body", "must be an OPML document (its root element is <opml>)")
	}
	if len(entries) == 0 {
		return nil, envelope.BadRequest("body", "holds no outline with an xmlUrl or htmlUrl")
	}
	return entries, nil
}

func entryOf(t xml.StartElement) opmlEntry {
	var e opmlEntry
	for _, a := range t.Attr {
		v := strings.TrimSpace(a.Value)
		switch a.Name.Local {
		case "text":
			e.Text = v
		case "title":
			if e.Text == "" {
				e.Text = v
			}
		case "xmlUrl":
			e.XMLURL = v
		case "htmlUrl":
			e.HTMLURL = v
		case opmlSourceType:
			e.SourceType = v
		}
	}
	return e
}
