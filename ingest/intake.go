package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// Facts first, feeds second. Every document a crawl fetches is read by
// every reader (ArticleRecorder, HappeningRecorder) and what it holds is
// recorded as facts of the source, whichever feeds are attached to it: an
// attachment of any kind made later finds them in its backfill, and no
// first crawl for a new kind is needed. Putting a fact into feeds is a
// second step: each attachment's feed kind has an Intake, which says what
// facts its feeds take (the capabilities it implements) and how one
// becomes an item. This package knows no kind of feed; the intakes are
// registered when the worker is built, as connectors are.

// ArticleRecorder records an article a crawl found through a source: a new
// one, or a known one now also found there. It returns the article as
// stored and whether it was new. lastMod is the listing's last
// modification, which dates an article whose page says nothing.
type ArticleRecorder interface {
	RecordArticle(ctx context.Context, sourceID uuid.UUID, content domain.ArticleContent, lastMod *time.Time) (
		article domain.ArticleDiscovered, isNew bool, err error)
}

// Intake is how one kind of feed takes what sources hold. An intake
// implements ArticleIntake, HappeningIntake or both; which of them is what
// the kind's feeds take.
type Intake interface {
	// FeedKind is the kind of feed the intake fills.
	FeedKind() domain.FeedKind
}

// ArticleIntake is an intake whose feeds take articles (pages and posts),
// judged by domain.Accepts.
type ArticleIntake interface {
	Intake
	// AddArticle puts an article into the feed of an attachment. It must
	// be idempotent per feed and article: added is false when the feed
	// already had it, since distribution and backfills may offer an
	// article twice.
	AddArticle(ctx context.Context, to Attachment, article domain.ArticleDiscovered) (added bool, err error)
}

// HappeningIntake is an intake whose feeds take calendar events, judged by
// domain.AcceptsHappening.
type HappeningIntake interface {
	Intake
	// AddHappening puts a recorded event into the feed of an attachment; it
	// must be idempotent per attachment and event (added false the second
	// time).
	AddHappening(ctx context.Context, to Attachment, eventID uuid.UUID) (added bool, err error)
}

// Intakes finds the intake of a feed kind.
type Intakes struct {
	byKind map[domain.FeedKind]Intake
}

// NewIntakes registers one intake per feed kind. Two intakes for one kind,
// or an intake that takes nothing, is a wiring mistake, reported as an
// error.
func NewIntakes(intakes ...Intake) (*Intakes, error) {
	r := &Intakes{byKind: map[domain.FeedKind]Intake{}}
	for _, in := range intakes {
		k := in.FeedKind()
		if _, taken := r.byKind[k]; taken {
			return nil, fmt.Errorf("register intake: feed kind %q has two intakes", k)
		}
		_, articles := in.(ArticleIntake)
		_, events := in.(HappeningIntake)
		if !articles && !events {
			return nil, fmt.Errorf("register intake: the intake of %q feeds takes nothing", k)
		}
		r.byKind[k] = in
	}
	return r, nil
}

// For returns the intake of a feed kind; false when none is registered.
func (r *Intakes) For(kind domain.FeedKind) (Intake, bool) {
	in, ok := r.byKind[kind]
	return in, ok
}

// articles is the article intake of a feed kind; false when its feeds take
// no articles (or no intake is registered for it).
func (r *Intakes) articles(kind domain.FeedKind) (ArticleIntake, bool) {
	in, ok := r.byKind[kind].(ArticleIntake)
	return in, ok
}

// events is the event intake of a feed kind; false when its feeds take no
// events.
func (r *Intakes) events(kind domain.FeedKind) (HappeningIntake, bool) {
	in, ok := r.byKind[kind].(HappeningIntake)
	return in, ok
}
