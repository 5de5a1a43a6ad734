package domain

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// NewsItemStream is the stream of one article in one feed. Appending the
// item with a no-stream expectation is what keeps an article in a feed once.
func NewsItemStream(feedID, newsPageID uuid.UUID) string {
	return "newsitem-" + feedID.String() + "-" + newsPageID.String()
}

// NewsItemAdded: an article entered a feed through one of its sources.
// The article's content is copied so the feed's items read without joins.
type NewsItemAdded struct {
	ItemID         uuid.UUID      `json:"itemId"`
	FeedID         uuid.UUID      `json:"feedId"`
	OrganizationID uuid.UUID      `json:"organizationId"`
	AttachmentID   uuid.UUID      `json:"attachmentId"`
	SourceID       uuid.UUID      `json:"sourceId"`
	SourceType     SourceType     `json:"sourceType"`
	NewsPageID     uuid.UUID      `json:"newsPageId"`
	VersionID      uuid.UUID      `json:"versionId"`
	Content        ArticleContent `json:"content"`
	At             time.Time      `json:"at"`
}

// FeedbackGiven: a client rated an item of a news or event feed. Feedback
// is additive. Kind is stored (empty in news feedback stored before event
// feeds existed); an event item's feedback names its happening
// (HappeningID, stored as eventId), a news item's its article.
type FeedbackGiven struct {
	FeedbackID     uuid.UUID `json:"feedbackId"`
	Kind           FeedKind  `json:"feedKind,omitempty"`
	ItemID         uuid.UUID `json:"itemId"`
	FeedID         uuid.UUID `json:"feedId"`
	OrganizationID uuid.UUID `json:"organizationId"`
	NewsPageID     uuid.UUID `json:"newsPageId,omitzero"`
	HappeningID    uuid.UUID `json:"eventId,omitzero"`
	SourceID       uuid.UUID `json:"sourceId"`
	Rating         Rating    `json:"rating"`
	Comment        string    `json:"comment,omitempty"`
	At             time.Time `json:"at"`
}

func (NewsItemAdded) EventType() string { return "NewsItemAdded" }
func (FeedbackGiven) EventType() string { return "FeedbackGiven" }

// FeedKind is the kind of feed the rated item is in.
func (e FeedbackGiven) FeedKind() FeedKind {
	if e.Kind == "" {
		return FeedNews
	}
	return e.Kind
}

// ItemTarget is where an item goes: one attachment of one feed.
type ItemTarget struct {
	FeedID         uuid.UUID
	OrganizationID uuid.UUID
	AttachmentID   uuid.UUID
	SourceID       uuid.UUID
	SourceType     SourceType
}

// ItemRef is what feedback needs to know about an item: where its stream is
// (the feed and the article of a news item, or the happening of an event item).
type ItemRef struct {
	FeedID      uuid.UUID
	NewsPageID  uuid.UUID
	HappeningID uuid.UUID
	SourceID    uuid.UUID
}

// ItemStream is the stream of the item ref names in a feed of kind: its
// feed and article for news, its feed and happening for event feeds.
func ItemStream(kind FeedKind, ref ItemRef) string {
	if kind == FeedHappenings {
		return HappeningItemStream(ref.FeedID, ref.HappeningID)
	}
	return NewsItemStream(ref.FeedID, ref.NewsPageID)
}

// NewsItem is one article in one feed, with the feedback given on it.
type NewsItem struct {
	added  NewsItemAdded
	exists bool
	// copies are the articles merged into the item (copies.go), split
	// those split off it.
	copies map[uuid.UUID]NewsItemCopyFound
	split  map[uuid.UUID]bool
}

// Apply folds a stored event.
func (i *NewsItem) Apply(e Event) {
	switch ev := e.(type) {
	case NewsItemAdded:
		i.added, i.exists = ev, true
	case NewsItemCopyFound:
		if i.copies == nil {
			i.copies = map[uuid.UUID]NewsItemCopyFound{}
		}
		i.copies[ev.NewsPageID] = ev
	case NewsItemCopySplit:
		delete(i.copies, ev.NewsPageID)
		if i.split == nil {
			i.split = map[uuid.UUID]bool{}
		}
		i.split[ev.NewsPageID] = true
	}
}

// Add decides putting an article into a feed; nothing when the feed has it.
func (i *NewsItem) Add(id uuid.UUID, to ItemTarget, article ArticleDiscovered, now time.Time) []Event {
	if i.exists {
		return nil
	}
	return []Event{NewsItemAdded{
		ItemID: id, FeedID: to.FeedID, OrganizationID: to.OrganizationID, AttachmentID: to.AttachmentID,
		SourceID: to.SourceID, SourceType: to.SourceType, NewsPageID: article.NewsPageID,
		VersionID: article.VersionID, Content: article.Content.WithoutText(), At: now,
	}}
}

// GiveFeedback decides a rating of the item by org, which must own it.
func (i *NewsItem) GiveFeedback(id, itemID, org uuid.UUID, fb Feedback, now time.Time) ([]Event, error) {
	return rate(i.exists, FeedbackGiven{
		ItemID: i.added.ItemID, FeedID: i.added.FeedID, OrganizationID: i.added.OrganizationID,
		NewsPageID: i.added.NewsPageID, SourceID: i.added.SourceID,
	}, id, itemID, org, fb, now)
}

// rate decides feedback on an item of any feed kind, described by item (its
// ids and what it shows); org must own it. One rule for every kind.
func rate(exists bool, item FeedbackGiven, id, itemID, org uuid.UUID, fb Feedback, now time.Time) ([]Event, error) {
	if !exists || item.ItemID != itemID || item.OrganizationID != org {
		return nil, notFound("item", itemID.String())
	}
	item.FeedbackID, item.Rating, item.Comment, item.At = id, fb.Rating, fb.Comment, now
	return []Event{item}, nil
}

// Rating is a feedback verdict.
type Rating string

const (
	RatingPositive Rating = "positive"
	RatingNegative Rating = "negative"
	RatingNeutral  Rating = "neutral"
)

// Known reports whether r is one of the three ratings: a stored rating
// that is not cannot be counted.
func (r Rating) Known() bool {
	switch r {
	case RatingPositive, RatingNegative, RatingNeutral:
		return true
	}
	return false
}

// MaxCommentLength is the feedback comment limit (api.md 8), in characters.
const MaxCommentLength = 5000

// Feedback is a validated rating with an optional comment.
type Feedback struct {
	Rating  Rating
	Comment string
}

// NewFeedback validates a rating and a comment.
func NewFeedback(rating, comment string) (Feedback, error) {
	switch r := Rating(rating); r {
	case RatingPositive, RatingNegative, RatingNeutral:
	case "":
		return Feedback{}, invalid("rating", "is required")
	default:
		return Feedback{}, invalid("rating", "must be one of positive, negative, neutral")
	}
	if utf8.RuneCountInString(comment) > MaxCommentLength {
		return Feedback{}, invalid("comment", "must be at most 5000 characters")
	}
	if hasStrayControl(comment) {
		return Feedback{}, invalid("comment", "must not contain control characters")
	}
	return Feedback{Rating: Rating(rating), Comment: strings.TrimSpace(comment)}, nil
}
