package domain_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// An article's running text is recorded up to MaxTextBytes, cut between
// characters, and the item that puts the article into a feed does not
// repeat it.
func TestAnArticlesTextIsBoundedAndStaysOutOfItsItems(t *testing.T) {
	long := strings.Repeat("é", domain.MaxTextBytes) // two bytes each: the bound falls inside none
	for _, tc := range []struct {
		name, text string
		want       int
	}{
		{"a short text is kept whole", "Engineers rebuild the quay.", len("Engineers rebuild the quay.")},
		{"a long text is cut at the bound", long, domain.MaxTextBytes},
		{"a cut never splits a character", "x" + long, domain.MaxTextBytes - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := domain.NewArticleContent(domain.ArticleContent{URL: "https://example.com/a", Title: "A", Text: tc.text})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Text) != tc.want || !utf8.ValidString(c.Text) || !strings.HasPrefix(tc.text, c.Text) {
				t.Fatalf("kept %d bytes (valid UTF-8 %v), want the first %d", len(c.Text), utf8.ValidString(c.Text), tc.want)
			}
			var a domain.Article
			found := a.Discover(uuid.New(), uuid.New(), uuid.New(), c, nil, time.Now())
			discovered := found[0].(domain.ArticleDiscovered)
			if discovered.Content.Text != c.Text {
				t.Fatal("the discovery does not record the text")
			}
			var item domain.NewsItem
			added := item.Add(uuid.New(), domain.ItemTarget{FeedID: uuid.New()}, discovered, time.Now())
			if text := added[0].(domain.NewsItemAdded).Content.Text; text != "" {
				t.Fatalf("the item repeats %d bytes of the text", len(text))
			}
		})
	}
}
