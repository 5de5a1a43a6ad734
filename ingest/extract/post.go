package extract

import (
	"fmt"

	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

// postArticle reads a platform post document as an article: the post's
// own title if it has one, its text, its picture, its permalink and when
// it was published, with the source block and ids its platform gave. A
// post needs no title.
func postArticle(d document.Document) (Article, error) {
	p, err := platform.ReadPost(d)
	if err != nil {
		return Article{}, fmt.Errorf("extract article %s: %w: %w", d.URL, ErrUnparsable, err)
	}
	c := p.Content()
	a := Article{URL: c.URL, Title: c.Title, Description: c.Description, ImageURL: c.ImageURL, Source: c.Source, Platform: c.Platform}
	if c.PublishedAt != nil {
		a.PublishedAt = *c.PublishedAt
	}
	return a, nil
}
