// Package projectors lists the projectors the service runs and which of
// them a write of the API waits for (D6). The list (All) is kept by hand:
// a projector runs because it is named here, never because a type happens
// to have a projector's methods. TestEveryProjectorTheModuleDeclaresIsListed
// finds every type of the module that implements projections.Projector
// and fails while one is not listed (unless the test says why, as for the
// webhook dispatcher, which its owner runs). It sits on the wiring floor,
// above the read models and ingest whose projectors it names.
package projectors

import (
	"github.com/feedsvc/feedsvc/ingest/attachments"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/articles"
	"github.com/feedsvc/feedsvc/readmodel/copies"
	"github.com/feedsvc/feedsvc/readmodel/feedback"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/readmodel/feedsubscriptions"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
	"github.com/feedsvc/feedsvc/readmodel/insights"
	"github.com/feedsvc/feedsvc/readmodel/negativesources"
	"github.com/feedsvc/feedsvc/readmodel/newsitems"
	"github.com/feedsvc/feedsvc/readmodel/orglog"
	"github.com/feedsvc/feedsvc/readmodel/sources"
	"github.com/feedsvc/feedsvc/readmodel/webhooks"
)

// All returns every projector the service runs (but the webhook
// dispatcher, which the webhook service runs when webhooks are on).
func All() []projections.Projector {
	return []projections.Projector{
		attachments.Projector{},
		articles.Projector{},
		copies.Projector{},
		feedback.Projector{},
		feeds.Projector{},
		feedsubscriptions.Projector{},
		happeningitems.Projector{},
		insights.Projector{},
		negativesources.Projector{},
		newsitems.Projector{},
		orglog.Projector{},
		sources.Projector{},
		webhooks.Projector{},
	}
}

// Consistent returns the projectors a write of the API waits for before it
// answers (D6): every projector of All but those that declare themselves
// projections.Unwaited. The read models the API reads are among them, and
// so is the crawler's view of attachments, since a disable or a delete must
// stop the crawling at once.
func Consistent() []projections.Projector {
	var out []projections.Projector
	for _, p := range All() {
		if _, unwaited := p.(projections.Unwaited); !unwaited {
			out = append(out, p)
		}
	}
	return out
}

// ByName finds a projector of All by name.
func ByName(name string) (projections.Projector, bool) {
	for _, p := range All() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}
