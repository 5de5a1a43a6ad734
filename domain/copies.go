package domain

import (
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// A news feed carries one story once. An article that is a copy of an
// item already in the feed (nearcopy.Compare: the same page under another
// address, or the same text on another site) does not become a second
// item: the item records it (NewsItemCopyFound) and keeps every source and
// address that carried it. The first copy seen stays the item. A wrong
// merge is undone by splitting the copy off (NewsItemCopySplit), which
// makes the copy an item of its own (NewsItemAdded in its stream); a copy
// split off is never merged into that item again.

// NewsItemCopyFound: an article found through an attachment of the feed is
// a copy of the item. It names the copy's article, where it was found and
// what decided it; the copy's content is kept so that a split can make it
// an item without reading the article again.
type NewsItemCopyFound struct {
	ItemID         uuid.UUID  `json:"itemId"`
	FeedID         uuid.UUID  `json:"feedId"`
	OrganizationID uuid.UUID  `json:"organizationId"`
	AttachmentID   uuid.UUID  `json:"attachmentId"`
	SourceID       uuid.UUID  `json:"sourceId"`
	SourceType     SourceType `json:"sourceType"`
	// ItemNewsPageID is the item's own article (its stream's key).
	ItemNewsPageID uuid.UUID      `json:"itemNewsPageId"`
	NewsPageID     uuid.UUID      `json:"newsPageId"`
	VersionID      uuid.UUID      `json:"versionId"`
	Content        ArticleContent `json:"content"`
	// By is what decided ("address" or "text"), Similarity the texts'
	// estimated similarity (nearcopy.Verdict).
	By         string    `json:"by"`
	Similarity float64   `json:"similarity"`
	At         time.Time `json:"at"`
}

// NewsItemCopySplit: a copy was split off the item; SplitItemID is the
// item it became.
type NewsItemCopySplit struct {
	ItemID         uuid.UUID `json:"itemId"`
	ItemNewsPageID uuid.UUID `json:"itemNewsPageId"`
	FeedID         uuid.UUID `json:"feedId"`
	OrganizationID uuid.UUID `json:"organizationId"`
	NewsPageID     uuid.UUID `json:"newsPageId"`
	SplitItemID    uuid.UUID `json:"splitItemId"`
	At             time.Time `json:"at"`
}

func (NewsItemCopyFound) EventType() string { return "NewsItemCopyFound" }
func (NewsItemCopySplit) EventType() string { return "NewsItemCopySplit" }

func init() {
	register(func() Event { return &NewsItemCopyFound{} })
	register(func() Event { return &NewsItemCopySplit{} })
}

// CopyMatch is an item of a feed that an article is a copy of.
type CopyMatch struct {
	// NewsPageID is the item's article (its stream's key).
	NewsPageID uuid.UUID
	Verdict    nearcopy.Verdict
}

// Page is what nearcopy compares of the article.
func (c ArticleContent) Page() nearcopy.Page {
	p := nearcopy.Page{URL: c.URL, Title: c.Title}
	if c.Signature != nil {
		p.Signature = *c.Signature
	}
	return p
}

// CopyWindow is how far apart in time (their effective times) an article
// and an item may be for the article to be the item's copy: copies of one
// story appear within days of one another.
const CopyWindow = 3 * 24 * time.Hour

// Exists reports whether the item was added.
func (i *NewsItem) Exists() bool { return i.exists }

// HasCopy reports whether the item holds the article as a copy.
func (i *NewsItem) HasCopy(newsPageID uuid.UUID) bool {
	_, ok := i.copies[newsPageID]
	return ok
}

// AddCopy decides recording article as a copy of the item: nothing when
// the item holds it already, or when the article is to be an item of its
// own (own): the item does not exist, is the article, or had it split off.
func (i *NewsItem) AddCopy(to ItemTarget, article ArticleDiscovered, v nearcopy.Verdict, now time.Time) (events []Event, own bool) {
	if !i.exists || i.added.NewsPageID == article.NewsPageID || i.split[article.NewsPageID] {
		return nil, true
	}
	if i.HasCopy(article.NewsPageID) {
		return nil, false
	}
	return []Event{NewsItemCopyFound{
		ItemID: i.added.ItemID, FeedID: i.added.FeedID, OrganizationID: i.added.OrganizationID,
		AttachmentID: to.AttachmentID, SourceID: to.SourceID, SourceType: to.SourceType,
		ItemNewsPageID: i.added.NewsPageID, NewsPageID: article.NewsPageID, VersionID: article.VersionID, Content: article.Content.WithoutText(),
		By: v.By, Similarity: v.Similarity, At: now,
	}}, false
}

// SplitCopy decides splitting the copy newsPageID off the item of org:
// the split, and the item the copy becomes (to be appended to the copy's
// own item stream).
func (i *NewsItem) SplitCopy(org, itemID, newsPageID, newItemID uuid.UUID, now time.Time) (split Event, added NewsItemAdded, err error) {
	if !i.exists || i.added.ItemID != itemID || i.added.OrganizationID != org {
		return nil, NewsItemAdded{}, notFound("item", itemID.String())
	}
	c, ok := i.copies[newsPageID]
	if !ok {
		return nil, NewsItemAdded{}, notFound("copy", newsPageID.String())
	}
	return NewsItemCopySplit{
			ItemID: itemID, ItemNewsPageID: i.added.NewsPageID, FeedID: i.added.FeedID, OrganizationID: org, NewsPageID: newsPageID, SplitItemID: newItemID, At: now,
		}, NewsItemAdded{
			ItemID: newItemID, FeedID: c.FeedID, OrganizationID: c.OrganizationID, AttachmentID: c.AttachmentID,
			SourceID: c.SourceID, SourceType: c.SourceType, NewsPageID: c.NewsPageID, VersionID: c.VersionID,
			Content: c.Content, At: now,
		}, nil
}

// An event feed lists one happening once, however many of its sources
// list it: a happening found through an attachment that is the same as
// the happening of an item of the feed (nearcopy.SameHappening: the same
// start, the same place, the same or a close title) does not become a
// second item. The item records it (HappeningItemCopyFound) and keeps
// its source; the first happening seen stays the item.

// HappeningItemCopyFound: a happening found through an attachment of the
// feed is the item's happening as another source lists it.
type HappeningItemCopyFound struct {
	ItemID         uuid.UUID  `json:"itemId"`
	FeedID         uuid.UUID  `json:"feedId"`
	OrganizationID uuid.UUID  `json:"organizationId"`
	AttachmentID   uuid.UUID  `json:"attachmentId"`
	SourceID       uuid.UUID  `json:"sourceId"`
	SourceType     SourceType `json:"sourceType"`
	// HappeningID is the item's happening, CopyID the copy's.
	HappeningID uuid.UUID `json:"eventId"`
	CopyID      uuid.UUID `json:"copyEventId"`
	// Title and URL are the copy's, as its source lists it.
	Title string    `json:"title,omitempty"`
	URL   string    `json:"url,omitempty"`
	At    time.Time `json:"at"`
}

// HappeningItemCopySplit: a happening recorded as the item's was split
// off it (a wrong merge undone); SplitItemID is the item it became
// (HappeningItemAdded in its own stream, HappeningItemID of the feed and
// the copy).
type HappeningItemCopySplit struct {
	ItemID         uuid.UUID `json:"itemId"`
	FeedID         uuid.UUID `json:"feedId"`
	OrganizationID uuid.UUID `json:"organizationId"`
	HappeningID    uuid.UUID `json:"eventId"`
	CopyID         uuid.UUID `json:"copyEventId"`
	SplitItemID    uuid.UUID `json:"splitItemId"`
	At             time.Time `json:"at"`
}

// The stored names keep "Event", as the other event item events do.
func (HappeningItemCopyFound) EventType() string { return "EventItemCopyFound" }
func (HappeningItemCopySplit) EventType() string { return "EventItemCopySplit" }

func init() {
	register(func() Event { return &HappeningItemCopyFound{} })
	register(func() Event { return &HappeningItemCopySplit{} })
}

// Listing is what nearcopy compares of a happening: its title, its first
// start, its venue and coordinates.
func (d HappeningDetails) Listing() nearcopy.Listing {
	l := nearcopy.Listing{Title: d.Title}
	for _, in := range d.Instances {
		for _, o := range in.Occurrences {
			if l.Start.IsZero() || o.Start.Before(l.Start) {
				l.Start = o.Start
			}
		}
	}
	if loc := d.Location; loc != nil {
		if loc.Venue != nil {
			l.Venue, l.Address = loc.Venue.Name, loc.Venue.Address
		}
		if l.Address == "" {
			l.Address = loc.DisplayAddress
		}
		if loc.Coordinates != nil {
			l.HasGeo, l.Lat, l.Lon = true, loc.Coordinates.Lat, loc.Coordinates.Lng
		}
	}
	return l
}

// AddCopy decides recording the happening copy, found through to, as the
// item's: nothing when the item does not exist, is that happening, holds
// it already or had it split off.
func (i *HappeningItem) AddCopy(to ItemTarget, copyID uuid.UUID, copy HappeningDetails, now time.Time) []Event {
	if _, held := i.copies[copyID]; !i.exists || i.added.HappeningID == copyID || held || i.split[copyID] {
		return nil
	}
	return []Event{HappeningItemCopyFound{
		ItemID: i.added.ItemID, FeedID: i.added.FeedID, OrganizationID: i.added.OrganizationID,
		AttachmentID: to.AttachmentID, SourceID: to.SourceID, SourceType: to.SourceType,
		HappeningID: i.added.HappeningID, CopyID: copyID, Title: copy.Title, URL: copy.PrimaryURL, At: now,
	}}
}

// HasCopy reports whether the item holds the happening as another listing.
func (i *HappeningItem) HasCopy(copyID uuid.UUID) bool {
	_, ok := i.copies[copyID]
	return ok
}

// SplitCopy decides splitting the happening copyID off the item of org:
// the split, and the item the copy becomes (to be appended to the copy's
// own item stream), found through the attachment that found the copy.
func (i *HappeningItem) SplitCopy(org, itemID, copyID uuid.UUID, now time.Time) (split Event, added HappeningItemAdded, err error) {
	if !i.exists || i.added.ItemID != itemID || i.added.OrganizationID != org {
		return nil, HappeningItemAdded{}, notFound("item", itemID.String())
	}
	c, ok := i.copies[copyID]
	if !ok {
		return nil, HappeningItemAdded{}, notFound("copy", copyID.String())
	}
	newID := HappeningItemID(c.FeedID, copyID)
	return HappeningItemCopySplit{
			ItemID: itemID, FeedID: i.added.FeedID, OrganizationID: org, HappeningID: i.added.HappeningID,
			CopyID: copyID, SplitItemID: newID, At: now,
		}, HappeningItemAdded{
			ItemID: newID, FeedID: c.FeedID, OrganizationID: c.OrganizationID, AttachmentID: c.AttachmentID,
			SourceID: c.SourceID, SourceType: c.SourceType, HappeningID: copyID, At: now,
		}, nil
}
