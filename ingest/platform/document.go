package platform

import (
	"encoding/json"
	"fmt"

	"github.com/feedsvc/feedsvc/ingest/document"
)

// MediaType is the media type of a post as a document: the post's JSON.
// A platform's API lists posts whole, so a post needs no fetch of its
// own; as a document it reaches the extractors (articles, events) the way
// a fetched page does.
const MediaType = "application/vnd.feedsvc.post+json"

// maxPostBytes bounds a post document: captions are a few thousand
// characters at most.
const maxPostBytes = 256 << 10

// NewDocument is the post as a document at its URL.
func NewDocument(p Post) (document.Document, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return document.Document{}, fmt.Errorf("encode post %s: %w", p.URL, err)
	}
	return document.Document{URL: p.URL, ContentType: MediaType, Body: body}, nil
}

// IsPost reports whether the document is a post.
func IsPost(d document.Document) bool { return d.MediaType() == MediaType }

// ReadPost reads a post document.
func ReadPost(d document.Document) (Post, error) {
	if len(d.Body) > maxPostBytes {
		return Post{}, fmt.Errorf("post document %s: %d bytes is too large", d.URL, len(d.Body))
	}
	var p Post
	if err := json.Unmarshal(d.Body, &p); err != nil {
		return Post{}, fmt.Errorf("read post document %s: %w", d.URL, err)
	}
	if p.URL == "" || p.ID == "" || !p.Platform.IsPlatform() {
		return Post{}, fmt.Errorf("post document %s: no platform, id or URL", d.URL)
	}
	return p, nil
}
