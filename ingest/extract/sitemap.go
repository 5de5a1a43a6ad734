package extract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/net/html/charset"
)

// MaxSitemapBytes bounds the decompressed size of a gzipped sitemap. The
// sitemap protocol caps a file at 50 MB uncompressed; the margin tolerates
// slightly oversized files while still stopping a decompression bomb.
const MaxSitemapBytes = 64 << 20

var (
	// ErrNotSitemap is returned for documents that are not a urlset, a
	// sitemapindex or a plain-text URL list (for example an RSS feed listed as
	// a sitemap, which callers may then parse with Feed).
	ErrNotSitemap = errors.New("not a sitemap")
	// ErrSitemapTooLarge is returned when a gzipped sitemap inflates beyond
	// MaxSitemapBytes.
	ErrSitemapTooLarge = errors.New("sitemap too large")
)

// Sitemap is a parsed sitemap: either an index of child sitemaps or a list of
// page URLs.
type Sitemap struct {
	Index    bool
	Children []SitemapRef
	URLs     []SitemapURL
}

// SitemapRef is a child sitemap listed in a sitemap index.
type SitemapRef struct {
	URL     string
	LastMod time.Time
}

// SitemapURL is one page of a urlset. PublishedAt and Title come from the
// Google News extension, ImageURL from the image extension.
type SitemapURL struct {
	URL         string
	LastMod     time.Time
	PublishedAt time.Time
	Title       string
	ImageURL    string
}

// The xml* types match elements by local name only, so prefixes such as
// news: and image: and missing or odd namespace declarations do not matter.
type xmlURLSet struct {
	URLs []xmlURL `xml:"url"`
}

type xmlURL struct {
	Loc     string     `xml:"loc"`
	LastMod string     `xml:"lastmod"`
	News    []xmlNews  `xml:"news"`
	Images  []xmlImage `xml:"image"`
}

type xmlNews struct {
	PublicationDate string `xml:"publication_date"`
	Title           string `xml:"title"`
}

type xmlImage struct {
	Loc string `xml:"loc"`
}

type xmlIndex struct {
	Sitemaps []xmlRef `xml:"sitemap"`
}

type xmlRef struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod"`
}

// ParseSitemap parses an XML sitemap or sitemap index, gzipped or not (detected by
// the gzip magic bytes, since servers label .xml.gz files inconsistently), or
// a plain-text sitemap with one URL per line.
func ParseSitemap(body []byte) (Sitemap, error) {
	return parseSitemap(body, MaxSitemapBytes)
}

// parseSitemap is ParseSitemap with the inflation bound as a parameter, so
// tests can prove the bound without inflating 64 MB.
func parseSitemap(body []byte, maxInflated int64) (Sitemap, error) {
	body, err := gunzipIfNeeded(body, maxInflated)
	if err != nil {
		return Sitemap{}, err
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return Sitemap{}, fmt.Errorf("parse sitemap: empty document: %w", ErrNotSitemap)
	}
	if trimmed[0] != '<' {
		return textSitemap(trimmed)
	}
	return xmlSitemap(trimmed)
}

func gunzipIfNeeded(body []byte, limit int64) ([]byte, error) {
	if len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		return body, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse sitemap: gzip: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("parse sitemap: gunzip: %w", err)
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("parse sitemap: %w (over %d bytes inflated)", ErrSitemapTooLarge, limit)
	}
	return out, nil
}

func newXMLDecoder(body []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	d.CharsetReader = charset.NewReaderLabel
	return d
}

func xmlSitemap(body []byte) (Sitemap, error) {
	d := newXMLDecoder(body)
	for {
		tok, err := d.Token()
		if err != nil {
			return Sitemap{}, fmt.Errorf("parse sitemap: no root element: %w", ErrNotSitemap)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch strings.ToLower(start.Name.Local) {
		case "urlset":
			return decodeURLSet(d, start)
		case "sitemapindex":
			return decodeIndex(d, start)
		default:
			return Sitemap{}, fmt.Errorf("parse sitemap: root element <%s>: %w", start.Name.Local, ErrNotSitemap)
		}
	}
}

func decodeURLSet(d *xml.Decoder, start xml.StartElement) (Sitemap, error) {
	var set xmlURLSet
	if err := d.DecodeElement(&set, &start); err != nil && len(set.URLs) == 0 {
		return Sitemap{}, fmt.Errorf("parse sitemap urlset: %w", err)
	}
	sm := Sitemap{URLs: make([]SitemapURL, 0, len(set.URLs))}
	for _, u := range set.URLs {
		loc := strings.TrimSpace(u.Loc)
		if loc == "" {
			continue
		}
		su := SitemapURL{URL: loc, LastMod: ParseDate(u.LastMod)}
		for _, n := range u.News {
			su.PublishedAt = ParseDate(n.PublicationDate)
			su.Title = Clean(n.Title)
			break
		}
		for _, img := range u.Images {
			if su.ImageURL = strings.TrimSpace(img.Loc); su.ImageURL != "" {
				break
			}
		}
		sm.URLs = append(sm.URLs, su)
	}
	return sm, nil
}

func decodeIndex(d *xml.Decoder, start xml.StartElement) (Sitemap, error) {
	var idx xmlIndex
	if err := d.DecodeElement(&idx, &start); err != nil && len(idx.Sitemaps) == 0 {
		return Sitemap{}, fmt.Errorf("parse sitemap index: %w", err)
	}
	sm := Sitemap{Index: true, Children: make([]SitemapRef, 0, len(idx.Sitemaps))}
	for _, s := range idx.Sitemaps {
		if loc := strings.TrimSpace(s.Loc); loc != "" {
			sm.Children = append(sm.Children, SitemapRef{URL: loc, LastMod: ParseDate(s.LastMod)})
		}
	}
	return sm, nil
}

// textSitemap reads the plain-text sitemap format: one absolute URL per
// line. Anything else (HTML error pages served as 200, JSON) is rejected.
func textSitemap(body []byte) (Sitemap, error) {
	var sm Sitemap
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "http://") && !strings.HasPrefix(line, "https://") {
			return Sitemap{}, fmt.Errorf("parse text sitemap: line %q is not a URL: %w", clip(line, 40), ErrNotSitemap)
		}
		sm.URLs = append(sm.URLs, SitemapURL{URL: line})
	}
	if err := sc.Err(); err != nil {
		return Sitemap{}, fmt.Errorf("parse text sitemap: %w", err)
	}
	return sm, nil
}
