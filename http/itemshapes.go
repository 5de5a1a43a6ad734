package http

import (
	"strings"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
)

// itemJSON is the current item shape (api.md 2.3). Optional scalars are
// omitted when empty after trimming, never sent as null.
type itemJSON struct {
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

func itemOut(it newsitems.NewsItem, includeSource bool) itemJSON {
	out := itemJSON{
		ID: it.ID.String(), NewsPageID: it.NewsPageID.String(),
		Title: strings.TrimSpace(it.Title), Description: strings.TrimSpace(it.Description),
		URL: strings.TrimSpace(it.URL), ImageURL: strings.TrimSpace(it.ImageURL),
		CreatedAt: timestamp(it.CreatedAt), UpdatedAt: timestamp(it.UpdatedAt),
	}
	if it.PublishedAt != nil {
		out.PublishedAt = timestamp(*it.PublishedAt)
	}
	if includeSource {
		block := it.Block()
		out.Source = &block
	}
	return out
}

// legacyItemJSON is the v0 shape (api.md 2.5): a type discriminator, data
// by type, internal ids visible and nulls emitted.
type legacyItemJSON struct {
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

// legacyItemOut renders an item as a site page (pages of sitemaps and
// index pages too), or as the post of the platform its block names
// (legacyPostData).
func legacyItemOut(it newsitems.NewsItem) legacyItemJSON {
	out := legacyItemJSON{
		ID: it.ID.String(), NewsPageID: it.NewsPageID.String(), Type: string(domain.SourceSite),
		Data: legacySiteData{
			SitePageID: it.NewsPageID.String(), SitePageVersionID: it.VersionID.String(), URL: it.URL,
			Title: nullable(it.Title), Description: nullable(it.Description),
		},
		CreatedAt: timestamp(it.CreatedAt), UpdatedAt: timestamp(it.UpdatedAt),
	}
	block := it.Block()
	if render, ok := legacyPostData[block.Type]; ok && it.Platform != nil {
		out.Type, out.Data = block.Type, render(legacyPost{item: it, block: block, ids: *it.Platform})
	}
	return out
}

func nullable(s string) *string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return &s
}
