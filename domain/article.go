package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// BackfillWindow is how far back a newly attached source is read (api.md 3).
const BackfillWindow = 14 * 24 * time.Hour

// ArticleStream is the stream of the article at a canonical URL. Keying by
// URL makes one article one newsPageId, however many feeds and
// organizations carry it.
func ArticleStream(canonicalURL string) string {
	sum := sha256.Sum256([]byte(canonicalURL))
	return "article-" + hex.EncodeToString(sum[:16])
}

// ArticleContent is what extraction found on a page.
type ArticleContent struct {
	URL         string     `json:"url"`
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	ImageURL    string     `json:"imageUrl,omitempty"`
	PublishedAt *time.Time `json:"publishedAt,omitempty"`
	// Source is the item's source block; nil in articles stored before
	// blocks were, which came from websites (see Block).
	Source *SourceBlock `json:"source,omitempty"`
	// Platform is set on a platform post: its own identifiers, which only
	// the legacy item shape shows.
	Platform *PlatformIDs `json:"platform,omitempty"`
	// Language is the primary subtag of the language the page declares
	// ("en" of "en-GB"), in lower case; empty when it declares none. The
	// items' full-text search stems words by it.
	Language string `json:"language,omitempty"`
	// Signature is the MinHash of the page's title and body text, which
	// finds copies of the article (copies.go); nil in articles stored
	// before signatures were, and in posts.
	Signature *nearcopy.Signature `json:"signature,omitempty"`
	// Text is the start of the page's running text (at most MaxTextBytes),
	// which the items' full-text search reads besides the title and the
	// description. Only ArticleDiscovered carries it: the items of the
	// article take their words from it (readmodel/newsitems), and the
	// events that copy an article's content into a feed leave it out
	// (WithoutText). Empty in articles stored before texts were, and in
	// pages with no running text (posts, lists of articles).
	Text string `json:"text,omitempty"`
}

// WithoutText is the content without its running text, as the events
// that copy it into a feed carry it.
func (c ArticleContent) WithoutText() ArticleContent {
	c.Text = ""
	return c
}

// Block returns the content's source block.
func (c ArticleContent) Block() SourceBlock {
	if c.Source != nil {
		return *c.Source
	}
	return SiteBlock(c.URL)
}

// Limits on extracted text keep one odd page from bloating every response.
const (
	maxTitleRunes       = 1000
	maxDescriptionRunes = 10000
	// MaxTextBytes bounds an article's running text as recorded: the first
	// 8 KiB of it, most of a news article, is what search reads, and it
	// keeps one long page from bloating the log.
	MaxTextBytes = 8 << 10
)

// NewArticleContent trims and bounds extracted fields; the URL must be an
// absolute http(s) URL.
func NewArticleContent(c ArticleContent) (ArticleContent, error) {
	u, err := NormalizeURL("url", c.URL)
	if err != nil {
		return ArticleContent{}, err
	}
	c.URL = u
	c.Title = truncateRunes(cleanText(c.Title), maxTitleRunes)
	c.Description = truncateRunes(cleanText(c.Description), maxDescriptionRunes)
	c.ImageURL = cleanText(c.ImageURL)
	c.Text = truncateBytes(cleanText(c.Text), MaxTextBytes)
	c.Language = PrimaryLanguage(c.Language)
	if c.Source != nil {
		b := c.Source.cleaned()
		c.Source = &b
	}
	if c.PublishedAt != nil {
		t := c.PublishedAt.UTC().Truncate(time.Millisecond)
		c.PublishedAt = &t
	}
	return c, nil
}

// cleanText drops control characters other than line breaks and tabs:
// pages carry NULs and the like, which JSON storage refuses and no reader
// wants, and invalid UTF-8.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if isStrayControl(r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// truncateBytes cuts s to at most n bytes, at a rune boundary.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ArticleDiscovered: an article was found for the first time.
// EffectiveAt is the time the backfill and enable rules judge it by: its
// publish time, else the sitemap's lastmod, else when it was discovered.
type ArticleDiscovered struct {
	NewsPageID  uuid.UUID      `json:"newsPageId"`
	VersionID   uuid.UUID      `json:"versionId"`
	SourceID    uuid.UUID      `json:"sourceId"`
	Content     ArticleContent `json:"content"`
	EffectiveAt time.Time      `json:"effectiveAt"`
	At          time.Time      `json:"at"`
}

// ArticleFoundOnSource: an already known article was found through another
// source record too, so feeds of that source can carry it.
type ArticleFoundOnSource struct {
	NewsPageID uuid.UUID `json:"newsPageId"`
	SourceID   uuid.UUID `json:"sourceId"`
	At         time.Time `json:"at"`
}

func (ArticleDiscovered) EventType() string    { return "ArticleDiscovered" }
func (ArticleFoundOnSource) EventType() string { return "ArticleFoundOnSource" }

// Article is the shared article aggregate.
type Article struct {
	discovered ArticleDiscovered
	sources    map[uuid.UUID]bool
	exists     bool
}

// Apply folds a stored event.
func (a *Article) Apply(e Event) {
	switch ev := e.(type) {
	case ArticleDiscovered:
		a.discovered, a.exists = ev, true
		a.sources = map[uuid.UUID]bool{ev.SourceID: true}
	case ArticleFoundOnSource:
		a.sources[ev.SourceID] = true
	}
}

// Discovery returns the first discovery of the article.
func (a *Article) Discovery() ArticleDiscovered { return a.discovered }

// Discover decides the events for finding content through a source: a
// discovery for a new article, a source link for a known one found through
// a new source, nothing otherwise.
func (a *Article) Discover(id, versionID, source uuid.UUID, content ArticleContent, lastMod *time.Time, now time.Time) []Event {
	if a.exists {
		if a.sources[source] {
			return nil
		}
		return []Event{ArticleFoundOnSource{NewsPageID: a.discovered.NewsPageID, SourceID: source, At: now}}
	}
	effective := now
	switch {
	case content.PublishedAt != nil:
		effective = *content.PublishedAt
	case lastMod != nil:
		effective = lastMod.UTC().Truncate(time.Millisecond)
	}
	return []Event{ArticleDiscovered{NewsPageID: id, VersionID: versionID, SourceID: source, Content: content, EffectiveAt: effective, At: now}}
}

// PrimaryLanguage is the primary language subtag of a BCP 47 tag ("en" of
// "en-GB", "pt" of "pt_BR"), in lower case; empty when tag does not start
// with one (two or three ASCII letters).
func PrimaryLanguage(tag string) string {
	tag = strings.TrimSpace(tag)
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	if len(tag) < 2 || len(tag) > 3 {
		return ""
	}
	for _, r := range tag {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return ""
		}
	}
	return strings.ToLower(tag)
}
