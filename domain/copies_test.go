package domain_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

func TestACopyIsRecordedOnceAndASplitCopyIsNeverMergedAgain(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	to := domain.ItemTarget{FeedID: uuid.New(), OrganizationID: uuid.New(), AttachmentID: uuid.New(), SourceID: uuid.New(), SourceType: domain.SourceSite}
	first := domain.ArticleDiscovered{NewsPageID: uuid.New(), Content: domain.ArticleContent{URL: "https://a.example/story"}}
	copyOf := domain.ArticleDiscovered{NewsPageID: uuid.New(), Content: domain.ArticleContent{URL: "https://b.example/story"}}
	v := nearcopy.Verdict{Copy: true, By: "text", Similarity: 0.8}

	var item domain.NewsItem
	if events, own := item.AddCopy(to, copyOf, v, now); len(events) != 0 || !own {
		t.Fatalf("a copy of an item that does not exist: %v, own %v", events, own)
	}
	itemID := uuid.New()
	for _, e := range item.Add(itemID, to, first, now) {
		item.Apply(e)
	}
	if events, own := item.AddCopy(to, first, v, now); len(events) != 0 || !own {
		t.Errorf("the item's own article taken for its copy: %v, own %v", events, own)
	}
	events, own := item.AddCopy(to, copyOf, v, now)
	if len(events) != 1 || own {
		t.Fatalf("a copy: %v, own %v", events, own)
	}
	found := events[0].(domain.NewsItemCopyFound)
	if found.ItemNewsPageID != first.NewsPageID || found.NewsPageID != copyOf.NewsPageID || found.ItemID != itemID {
		t.Errorf("the copy names %+v", found)
	}
	item.Apply(found)
	if again, _ := item.AddCopy(to, copyOf, v, now); len(again) != 0 {
		t.Errorf("a copy recorded twice: %v", again)
	}
	if _, _, err := item.SplitCopy(uuid.New(), itemID, copyOf.NewsPageID, uuid.New(), now); err == nil {
		t.Error("another organization split the copy")
	}
	newID := uuid.New()
	split, added, err := item.SplitCopy(to.OrganizationID, itemID, copyOf.NewsPageID, newID, now)
	if err != nil {
		t.Fatal(err)
	}
	if added.ItemID != newID || added.NewsPageID != copyOf.NewsPageID || added.AttachmentID != to.AttachmentID {
		t.Errorf("the split copy's item: %+v", added)
	}
	item.Apply(split)
	if item.HasCopy(copyOf.NewsPageID) {
		t.Error("the split copy is still the item's")
	}
	if events, own := item.AddCopy(to, copyOf, v, now); len(events) != 0 || !own {
		t.Errorf("a split copy offered again: %v, own %v (want an item of its own)", events, own)
	}
	if _, _, err := item.SplitCopy(to.OrganizationID, itemID, copyOf.NewsPageID, uuid.New(), now); err == nil {
		t.Error("a copy split twice")
	}
}

func TestAnEventCopyIsRecordedOnceAndASplitOneBecomesItsOwnItemAndIsNeverMergedAgain(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	venue := domain.ItemTarget{FeedID: uuid.New(), OrganizationID: uuid.New(), AttachmentID: uuid.New(), SourceID: uuid.New(), SourceType: domain.SourceSite}
	tickets := venue
	tickets.AttachmentID, tickets.SourceID = uuid.New(), uuid.New()
	own, copyID := uuid.New(), uuid.New()
	listing := domain.HappeningDetails{Title: "Trio", PrimaryURL: "https://tickets.example/trio"}

	var item domain.HappeningItem
	if events := item.AddCopy(tickets, copyID, listing, now); len(events) != 0 {
		t.Fatalf("a copy of an item that does not exist: %v", events)
	}
	for _, e := range item.Add(venue, own, now) {
		item.Apply(e)
	}
	if events := item.AddCopy(tickets, own, listing, now); len(events) != 0 {
		t.Errorf("the item's own happening taken for its copy: %v", events)
	}
	events := item.AddCopy(tickets, copyID, listing, now)
	if len(events) != 1 {
		t.Fatalf("a copy: %v", events)
	}
	item.Apply(events[0])
	if again := item.AddCopy(tickets, copyID, listing, now); len(again) != 0 {
		t.Errorf("a copy recorded twice: %v", again)
	}
	itemID := domain.HappeningItemID(venue.FeedID, own)
	if _, _, err := item.SplitCopy(uuid.New(), itemID, copyID, now); err == nil {
		t.Error("another organization split the copy")
	}
	split, added, err := item.SplitCopy(venue.OrganizationID, itemID, copyID, now)
	if err != nil {
		t.Fatal(err)
	}
	if added.ItemID != domain.HappeningItemID(venue.FeedID, copyID) || added.HappeningID != copyID || added.AttachmentID != tickets.AttachmentID {
		t.Errorf("the split copy's item: %+v", added)
	}
	if s := split.(domain.HappeningItemCopySplit); s.SplitItemID != added.ItemID || s.CopyID != copyID || s.ItemID != itemID {
		t.Errorf("the split names %+v", s)
	}
	item.Apply(split)
	if item.HasCopy(copyID) {
		t.Error("the split copy is still the item's")
	}
	if events := item.AddCopy(tickets, copyID, listing, now); len(events) != 0 {
		t.Errorf("a split copy merged again: %v", events)
	}
	if _, _, err := item.SplitCopy(venue.OrganizationID, itemID, copyID, now); err == nil {
		t.Error("a copy split twice")
	}
}
