package intake

import (
	"context"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest"
)

// News is the intake of news feeds: they take articles, web pages and
// platform posts alike, each as one news item (commands.AddNewsItem).
type News struct{ Commands *commands.Handler }

var _ ingest.ArticleIntake = News{}

// FeedKind is news.
func (News) FeedKind() domain.FeedKind { return domain.FeedNews }

// AddArticles adds the articles to the attachments' news feeds, in one
// commit; added[i] is false when the feed already had the article.
func (n News) AddArticles(ctx context.Context, offers []ingest.ArticleOffer) ([]bool, error) {
	items := make([]commands.AddNewsItem, len(offers))
	for i, o := range offers {
		items[i] = commands.AddNewsItem{ItemTarget: o.To.Target(), Article: o.Article}
	}
	added, _, err := n.Commands.AddNewsItems(ctx, items)
	return added, err
}
