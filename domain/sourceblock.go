package domain

// SourceBlock is what an item shows of where it came from (api.md 2.4),
// typed by the kind of source: a site gives its page URL; platform posts
// give their permalink, text or caption, media and publisher. The connector
// that found the content fills it; it is stored with the content, so the
// API renders it without knowing source kinds.
type SourceBlock struct {
	Type         string     `json:"type"`
	Subtype      string     `json:"subtype,omitempty"`
	URL          string     `json:"url,omitempty"`
	PermalinkURL string     `json:"permalinkUrl,omitempty"`
	Caption      string     `json:"caption,omitempty"`
	Text         string     `json:"text,omitempty"`
	MediaURL     string     `json:"mediaUrl,omitempty"`
	ThumbnailURL string     `json:"thumbnailUrl,omitempty"`
	Publisher    *Publisher `json:"publisher,omitempty"`
}

// Publisher is who published a platform post (api.md 2.4).
type Publisher struct {
	Name      string `json:"name"`
	Username  string `json:"username,omitempty"`
	AvatarURL string `json:"avatarUrl,omitempty"`
	Type      string `json:"type,omitempty"`
}

// SiteBlock is the block of content found on a website.
func SiteBlock(url string) SourceBlock { return SourceBlock{Type: string(SourceSite), URL: url} }
