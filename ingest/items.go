package ingest

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// ArticleRecorder records an article a crawl found through a source: a new
// one, or a known one now also found there. It returns the article as
// stored and whether it was new. lastMod is the listing's last
// modification, which dates an article whose page says nothing.
type ArticleRecorder interface {
	RecordArticle(ctx context.Context, sourceID uuid.UUID, content domain.ArticleContent, lastMod *time.Time) (
		article domain.ArticleDiscovered, isNew bool, err error)
}

// ItemWriter puts an article into the feed of an attachment, for one kind
// of feed. It must be idempotent per feed and article: added is false when
// the feed already had it, since distribution and backfills may offer an
// article twice.
type ItemWriter interface {
	AddItem(ctx context.Context, to Attachment, article domain.ArticleDiscovered) (added bool, err error)
}
