package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/attachments"
)

// Attachment is one feed that takes items from a source record: a row of
// the attachments read model (ingest/attachments), which intakes are
// handed with each offer.
type Attachment = attachments.Attachment

// distribute adds articles of a source to every feed of the source whose
// kind takes articles and that accepts them, each kind's together. The
// attachments are read afresh for each call, after the articles were
// recorded in crawl_seen: an attachment too new to be seen here is then
// guaranteed to see the articles in its backfill (see backfill.go). It
// returns how many items it added for each article.
func (w *Worker) distribute(ctx context.Context, sourceID uuid.UUID, articles []domain.ArticleDiscovered) ([]int, error) {
	atts, err := w.attachments.OfSource(ctx, sourceID)
	if err != nil {
		return nil, err
	}
	offers := make([]ArticleOffer, 0, len(atts)*len(articles))
	of := make([]int, 0, cap(offers)) // the article of each offer
	for _, a := range atts {
		for i, article := range articles {
			offers = append(offers, ArticleOffer{To: a, Article: article})
			of = append(of, i)
		}
	}
	added := make([]int, len(articles))
	got, err := w.offerArticles(ctx, offers)
	now := time.Now()
	for i, ok := range got {
		if ok {
			added[of[i]]++
			observeAdded(publicationDelay, offers[i], now)
		}
	}
	return added, err
}

// offerArticles puts each offered article into its attachment's feed when
// the feed's kind takes articles and the attachment accepts it, the
// offers of one kind in one call of its intake; added says which offers
// put an article into a feed that did not have it yet. Crawls and
// backfills offer articles this one way.
func (w *Worker) offerArticles(ctx context.Context, offers []ArticleOffer) (added []bool, err error) {
	added = make([]bool, len(offers))
	take := make([]bool, len(offers))
	var (
		checks  []attachments.RuleCheck
		checked []int // the offer of each check
	)
	for i, o := range offers {
		if _, ok := w.intakes.For(o.To.FeedKind); !ok {
			return added, fmt.Errorf("add article %s to feed %s: no intake for %s feeds", o.Article.NewsPageID, o.To.FeedID, o.To.FeedKind)
		}
		_, ok := w.intakes.articles(o.To.FeedKind)
		take[i] = ok && o.To.Accepts(o.Article.EffectiveAt)
		if take[i] && o.To.HasRules() {
			checks = append(checks, attachments.RuleCheck{Rules: *o.To.FeedRules, Content: o.Article.Content})
			checked = append(checked, i)
		}
	}
	// The feeds' keyword rules, matched in Postgres as q is (stemmed in
	// each article's language), for every offer at once.
	if len(checks) > 0 {
		admitted, err := w.attachments.RulesAdmit(ctx, checks)
		if err != nil {
			return added, err
		}
		for j, ok := range admitted {
			take[checked[j]] = ok
		}
	}
	byKind := map[domain.FeedKind][]int{}
	var kinds []domain.FeedKind
	for i, o := range offers {
		if !take[i] {
			continue
		}
		if _, seen := byKind[o.To.FeedKind]; !seen {
			kinds = append(kinds, o.To.FeedKind)
		}
		byKind[o.To.FeedKind] = append(byKind[o.To.FeedKind], i)
	}
	for _, k := range kinds {
		in, _ := w.intakes.articles(k)
		mine := make([]ArticleOffer, len(byKind[k]))
		for j, i := range byKind[k] {
			mine[j] = offers[i]
		}
		got, err := in.AddArticles(ctx, mine)
		if err != nil {
			return added, fmt.Errorf("add %d articles to %s feeds: %w", len(mine), k, err)
		}
		for j, ok := range got {
			added[byKind[k][j]] = ok
		}
	}
	return added, nil
}
