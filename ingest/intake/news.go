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

// AddArticle adds the article to the attachment's news feed; false when
// the feed already has it.
func (n News) AddArticle(ctx context.Context, to ingest.Attachment, article domain.ArticleDiscovered) (bool, error) {
	added, _, err := n.Commands.AddNewsItem(ctx, commands.AddNewsItem{ItemTarget: to.Target(), Article: article})
	return added, err
}
