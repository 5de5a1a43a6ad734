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

// ArticleRecorder records the articles a crawl found through a source:
// new ones, or known ones now also found there.
type ArticleRecorder interface {
	// RecordArticles records several found articles together (in one
	// commit, where the store allows) and returns each as stored, in
	// order, and whether it was new.
	RecordArticles(ctx context.Context, found []FoundArticle) ([]RecordedArticle, error)
	// ArticleText reads the running text an article was recorded with,
	// which the read models keep only for items: a backfill offering an
	// article to a feed with rules reads it here.
	ArticleText(ctx context.Context, canonicalURL string) (string, error)
}

// FoundArticle is an article as a crawl found it through a source.
// LastMod is the listing's last modification, which dates an article
// whose page says nothing.
type FoundArticle struct {
	SourceID uuid.UUID
	Content  domain.ArticleContent
	LastMod  *time.Time
}

// RecordedArticle is a found article as stored.
type RecordedArticle struct {
	domain.ArticleDiscovered
	New bool
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
	// AddArticles puts articles into the feeds of attachments, together
	// (in one commit, where the store allows). It must be idempotent per
	// feed and article: added[i] is false when offers[i]'s feed already
	// had its article, since distribution and backfills may offer an
	// article twice.
	AddArticles(ctx context.Context, offers []ArticleOffer) (added []bool, err error)
}

// ArticleOffer is an article offered to the feed of an attachment.
type ArticleOffer struct {
	To      Attachment
	Article domain.ArticleDiscovered
}

// HappeningIntake is an intake whose feeds take calendar events, judged by
// domain.AcceptsHappening.
type HappeningIntake interface {
	Intake
	// AddHappening puts a recorded event into the feed of an attachment; it
	// must be idempotent per attachment and event (added false the second
	// time).
	AddHappening(ctx context.Context, to Attachment, happeningID uuid.UUID) (added bool, err error)
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

// happenings is the happening intake of a feed kind; false when its feeds take no
// happenings.
func (r *Intakes) happenings(kind domain.FeedKind) (HappeningIntake, bool) {
	in, ok := r.byKind[kind].(HappeningIntake)
	return in, ok
}
