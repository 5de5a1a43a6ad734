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

// cleaned is the block with its text bounded like an article's
// description and stripped of stray control characters.
func (b SourceBlock) cleaned() SourceBlock {
	b.Caption = truncateRunes(cleanText(b.Caption), maxDescriptionRunes)
	b.Text = truncateRunes(cleanText(b.Text), maxDescriptionRunes)
	if b.Publisher != nil {
		p := *b.Publisher
		p.Name = truncateRunes(cleanText(p.Name), maxTitleRunes)
		b.Publisher = &p
	}
	return b
}

// PlatformIDs are a platform post's own identifiers and its account as the
// platform names it: what the legacy item shape shows besides the block
// (api.md 2.5), where internal ids are visible. The current shapes never
// show them.
type PlatformIDs struct {
	// PostID is the platform's id of the post (tweet, media, video, post
	// or event id).
	PostID string `json:"postId"`
	// Code is the Instagram shortcode.
	Code string `json:"code,omitempty"`
	// AccountID is the platform's id of the account.
	AccountID string `json:"accountId,omitempty"`
	// AccountName is the display name as the platform gave it; empty when
	// it gave none (the block's publisher name then falls back to the
	// username, where the legacy shape shows null).
	AccountName string `json:"accountName,omitempty"`
}
