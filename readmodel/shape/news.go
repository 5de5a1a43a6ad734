package shape

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// News is what a news item is rendered from: the members its read model
// stores.
type News struct {
	ID          uuid.UUID
	NewsPageID  uuid.UUID
	VersionID   uuid.UUID
	URL         string
	Title       string
	Description string
	ImageURL    string
	PublishedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Block is the item's source block (api.md 2.4).
	Block domain.SourceBlock
	// Platform is a platform post's own ids; nil for web pages.
	Platform *domain.PlatformIDs
}

// NewsJSON is the current news item shape (api.md 2.3). Optional scalars
// are omitted when empty after trimming, never sent as null.
type NewsJSON struct {
	ID          string `json:"id"`
	NewsPageID  string `json:"newsPageId"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	URL         string `json:"url,omitempty"`
	ImageURL    string `json:"imageUrl,omitempty"`
	PublishedAt string `json:"publishedAt,omitempty"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
	// Source is the block the item's connector stored (api.md 2.4).
	Source *domain.SourceBlock `json:"source,omitempty"`
}

// CurrentNews renders n in the current shape, with its source block when
// includeSource.
func CurrentNews(n News, includeSource bool) NewsJSON {
	out := NewsJSON{
		ID: n.ID.String(), NewsPageID: n.NewsPageID.String(),
		Title: strings.TrimSpace(n.Title), Description: strings.TrimSpace(n.Description),
		URL: strings.TrimSpace(n.URL), ImageURL: strings.TrimSpace(n.ImageURL),
		CreatedAt: Timestamp(n.CreatedAt), UpdatedAt: Timestamp(n.UpdatedAt),
	}
	if n.PublishedAt != nil {
		out.PublishedAt = Timestamp(*n.PublishedAt)
	}
	if includeSource {
		block := n.Block
		out.Source = &block
	}
	return out
}

// LegacyNewsJSON is the v0 news item shape (api.md 2.5): a type
// discriminator, data by type, internal ids visible and nulls emitted.
type LegacyNewsJSON struct {
	ID         string `json:"id"`
	NewsPageID string `json:"newsPageId"`
	Type       string `json:"type"`
	Data       any    `json:"data"`
	CreatedAt  string `json:"createdAt"`
	UpdatedAt  string `json:"updatedAt"`
}

type legacySiteData struct {
	SitePageID        string  `json:"sitePageId"`
	SitePageVersionID string  `json:"sitePageVersionId"`
	URL               string  `json:"url"`
	Title             *string `json:"title"`
	Description       *string `json:"description"`
}

// LegacyNews renders n as a site page (pages of sitemaps and index pages
// too), or as the post of the platform its block names (legacyPostData).
func LegacyNews(n News) LegacyNewsJSON {
	out := LegacyNewsJSON{
		ID: n.ID.String(), NewsPageID: n.NewsPageID.String(), Type: string(domain.SourceSite),
		Data: legacySiteData{
			SitePageID: n.NewsPageID.String(), SitePageVersionID: n.VersionID.String(), URL: n.URL,
			Title: nullable(n.Title), Description: nullable(n.Description),
		},
		CreatedAt: Timestamp(n.CreatedAt), UpdatedAt: Timestamp(n.UpdatedAt),
	}
	if render, ok := legacyPostData[n.Block.Type]; ok && n.Platform != nil {
		out.Type, out.Data = n.Block.Type, render(legacyPost{item: n, block: n.Block, ids: *n.Platform})
	}
	return out
}

// nullable is a legacy text member: null when empty after trimming.
func nullable(s string) *string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return &s
}
