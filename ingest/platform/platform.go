// Package platform is how the service reads accounts on social platforms
// (Instagram, TikTok, Twitter/X, Facebook). Every provider of a platform,
// its official API or a self-hosted RSSHub, implements one small
// interface, Platform: look an account up, list its posts since a time.
// What they list is a Post, the one shape every platform's content takes
// here; the connector (connector/social) hands posts on as documents
// (document.go) that the extractors read like any fetched page.
//
// The shared HTTP side (client.go) is what keeps every provider within
// its platform's limits: a request budget per minute, back-off after a
// rate-limit answer, bounded time and bodies, and credentials that never
// reach an error message or a log.
package platform

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

// Platform is one provider of one platform.
type Platform interface {
	// Lookup finds the account a source names. An account that does not
	// exist, is private, or cannot be read by this provider is an error
	// wrapping ErrNotFound.
	Lookup(ctx context.Context, ref Ref) (Account, error)
	// Posts lists one page of the account's posts published at or after
	// since, newest first. cursor is "" for the first page and Page.Next
	// for the following ones; Next is "" after the last page. A provider
	// may list a few older posts (its paging is coarser than since); the
	// caller filters by date.
	Posts(ctx context.Context, account Account, since time.Time, cursor string) (Page, error)
}

// Ref is an account as a source names it (domain.SourceDetails).
type Ref struct {
	// Handle is the normalized username, or a Facebook identifier (a page
	// handle or numeric id).
	Handle string
	// Kind is the Facebook account kind (page, group, profile); empty for
	// the other platforms.
	Kind string
}

// RefOf is the account a source record names.
func RefOf(d domain.SourceDetails) Ref {
	if d.SourceType == domain.SourceFacebook {
		return Ref{Handle: d.Identifier, Kind: d.FacebookType}
	}
	return Ref{Handle: d.Username}
}

// Account is an account as a platform describes it.
type Account struct {
	// ID is the platform's own id of the account.
	ID string `json:"id"`
	// Username is the handle, without a leading @; empty when the
	// platform exposes none.
	Username string `json:"username,omitempty"`
	// Name is the display name; empty when the platform gives none.
	Name      string `json:"name,omitempty"`
	AvatarURL string `json:"avatarUrl,omitempty"`
	// Kind is the Facebook account kind (page, group, profile).
	Kind string `json:"kind,omitempty"`
}

// Post is one piece of content of an account: a tweet, an Instagram post
// or reel, a TikTok video, a Facebook post or page event.
type Post struct {
	Platform domain.SourceType `json:"platform"`
	// ID is the platform's own id of the post.
	ID string `json:"id"`
	// Code is the Instagram shortcode.
	Code string `json:"code,omitempty"`
	// Subtype is what api.md 2.4 calls it: post, reel, video, entry,
	// reshare, quote, reply, photo, link or event.
	Subtype string `json:"subtype"`
	// URL is the post's canonical public address. It is the post's
	// identity (one newsPageId per post across feeds), so every provider
	// of a platform writes it the same way.
	URL string `json:"url"`
	// Title is the post's own title, for the platforms that have one (a
	// Facebook event's name).
	Title string `json:"title,omitempty"`
	// Text is the caption or text.
	Text         string `json:"text,omitempty"`
	MediaURL     string `json:"mediaUrl,omitempty"`
	ThumbnailURL string `json:"thumbnailUrl,omitempty"`
	// ImageURL is the post's best picture: the image itself, else a
	// video's thumbnail or preview.
	ImageURL    string    `json:"imageUrl,omitempty"`
	PublishedAt time.Time `json:"publishedAt"`
	Account     Account   `json:"account"`
	// Event is set on a Facebook page event.
	Event *Happening `json:"event,omitempty"`
}

// Happening is a Facebook page event.
type Happening struct {
	Start time.Time `json:"start"`
	// End is zero when the event states none.
	End time.Time `json:"end"`
	// Timezone is the IANA zone the event is held in, when stated.
	Timezone  string `json:"timezone,omitempty"`
	Place     *Place `json:"place,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Online    bool   `json:"online,omitempty"`
	TicketURL string `json:"ticketUrl,omitempty"`
	// UpdatedAt is when the page last changed the event.
	UpdatedAt time.Time `json:"updatedAt"`
}

// Place is where an event is held.
type Place struct {
	Name       string   `json:"name,omitempty"`
	Street     string   `json:"street,omitempty"`
	PostalCode string   `json:"postalCode,omitempty"`
	City       string   `json:"city,omitempty"`
	Region     string   `json:"region,omitempty"`
	Country    string   `json:"country,omitempty"`
	Lat        *float64 `json:"lat,omitempty"`
	Lng        *float64 `json:"lng,omitempty"`
}

// Page is one page of an account's posts.
type Page struct {
	Posts []Post
	// Next is the cursor of the next page; "" after the last.
	Next string
}

// ErrNotFound: the account or post does not exist, is private, or this
// provider cannot read it.
var ErrNotFound = errors.New("not found, private or inaccessible")

// NotFound is an ErrNotFound saying why, in words a client may read: it
// names no credential and quotes nothing the client sent.
type NotFound struct{ Reason string }

func (e *NotFound) Error() string        { return e.Reason }
func (e *NotFound) Is(target error) bool { return target == ErrNotFound }

// RateLimitError: the platform asked to be left alone until Until (a 429,
// or its own rate-limit answer), or this process's request budget for it
// is spent. Every request to the platform fails fast until then.
type RateLimitError struct {
	Platform string
	Until    time.Time
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("%s rate limit: backing off until %s", e.Platform, e.Until.UTC().Format(time.RFC3339))
}

// RetryAfter is how long is left to wait at now.
func (e *RateLimitError) RetryAfter(now time.Time) time.Duration {
	return max(e.Until.Sub(now), 0)
}

// APIError is an answer of a platform that is neither a success, a
// not-found nor a rate limit (a bad credential, a server error). Message is
// the platform's own, which never holds our credentials.
type APIError struct {
	Platform string
	Status   int
	Code     string
	Message  string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s answered %d", e.Platform, e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + clip(e.Message, 300)
	}
	return msg
}

// Permanent reports whether asking again cannot help: the platform refused
// the request itself (a 4xx other than a rate limit), not its timing.
func (e *APIError) Permanent() bool { return e.Status >= 400 && e.Status < 500 }

// Block is the post's source block (api.md 2.4): Instagram and TikTok
// give a caption and a thumbnail, Twitter and Facebook a text; only
// Facebook's publisher has a type.
func (p Post) Block() domain.SourceBlock {
	b := domain.SourceBlock{
		Type: string(p.Platform), Subtype: p.Subtype, PermalinkURL: p.URL, MediaURL: p.MediaURL,
		Publisher: &domain.Publisher{
			Name: firstOf(p.Account.Name, p.Account.Username, p.Account.ID), Username: p.Account.Username,
			AvatarURL: p.Account.AvatarURL,
		},
	}
	switch p.Platform {
	case domain.SourceInstagram, domain.SourceTikTok:
		b.Caption, b.ThumbnailURL = p.Text, p.ThumbnailURL
	default:
		b.Text = p.Text
	}
	if p.Platform == domain.SourceFacebook {
		b.Publisher.Type = firstOf(p.Account.Kind, "page")
	}
	return b
}

// IDs are the post's own identifiers, which only the legacy item shape
// shows (api.md 2.5).
func (p Post) IDs() domain.PlatformIDs {
	return domain.PlatformIDs{PostID: p.ID, Code: p.Code, AccountID: p.Account.ID, AccountName: p.Account.Name}
}

// Content is the post as an article: the item fields of api.md 2.3 with
// its block and identifiers.
func (p Post) Content() domain.ArticleContent {
	block, ids := p.Block(), p.IDs()
	c := domain.ArticleContent{
		URL: p.URL, Title: p.Title, Description: p.Text, ImageURL: p.ImageURL,
		Source: &block, Platform: &ids,
	}
	if !p.PublishedAt.IsZero() {
		t := p.PublishedAt.UTC()
		c.PublishedAt = &t
	}
	return c
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
