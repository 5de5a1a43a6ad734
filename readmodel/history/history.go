// Package history reads what made an item what it is straight from the
// event log: the item's stream (added, linked, feedback), its article's or
// event's stream (discovered, changed), and for an event item the
// detachments of the attachments that brought it. It answers what an
// analyst asks when an item looks wrong, from the facts rather than a read
// model.
package history

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/domain/stream"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Streams an entry comes from.
const (
	StreamItem    = "item"
	StreamArticle = "article"
	StreamEvent   = "event"
	StreamFeed    = "feed"
)

// Entry is one event of an item's history.
type Entry struct {
	Position eventstore.Position
	// Stream says whose event it is: the item's, its article's, its
	// event's, or its feed's.
	Stream string
	// Type is the stored event type.
	Type string
	// At is when the event says it happened.
	At time.Time
	// Data summarizes the event in a shape fixed per type.
	Data any
}

// Sources tells which of some source records an organization knows:
// articles and events are shared, and the sources other organizations
// found them through are not this one's to see.
type Sources interface {
	KnownSources(ctx context.Context, org uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error)
}

// Reader reads histories from the store.
type Reader struct {
	store   eventstore.Store
	sources Sources
}

// New returns a reader of histories.
func New(store eventstore.Store, sources Sources) *Reader {
	return &Reader{store: store, sources: sources}
}

// recorded is a decoded event of a stream, with where it sits.
type recorded struct {
	stream string
	rec    eventstore.RecordedEvent
	event  domain.Event
}

// Item returns, in log order, the history of the item ref names in a feed
// of kind, as org sees it. The caller has checked that org has the item;
// an item stream that does not belong to org is not found all the same.
func (r *Reader) Item(ctx context.Context, org uuid.UUID, kind domain.FeedKind, itemID uuid.UUID, ref domain.ItemRef) ([]Entry, error) {
	item, err := r.read(ctx, StreamItem, domain.ItemStream(kind, ref))
	if err != nil {
		return nil, err
	}
	var (
		other       string
		attachments = map[uuid.UUID]bool{}
	)
	switch added := firstEvent(item).(type) {
	case domain.NewsItemAdded:
		if added.ItemID != itemID || added.OrganizationID != org {
			return nil, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
		}
		other = domain.ArticleStream(added.Content.URL)
	case domain.HappeningItemAdded:
		if added.ItemID != itemID || added.OrganizationID != org {
			return nil, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
		}
		other = domain.HappeningStream(added.HappeningID)
		for _, e := range item {
			switch ev := e.event.(type) {
			case domain.HappeningItemAdded:
				attachments[ev.AttachmentID] = true
			case domain.HappeningItemLinked:
				attachments[ev.AttachmentID] = true
			}
		}
	default:
		return nil, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
	}
	underlying, err := r.read(ctx, map[domain.FeedKind]string{domain.FeedNews: StreamArticle, domain.FeedHappenings: StreamEvent}[kind], other)
	if err != nil {
		return nil, err
	}
	all := append(item, underlying...)
	if len(attachments) > 0 {
		feed, err := r.read(ctx, StreamFeed, domain.FeedStream(kind, ref.FeedID))
		if err != nil {
			return nil, err
		}
		for _, e := range feed {
			if d, ok := e.event.(domain.SourceDetached); ok && attachments[d.AttachmentID] {
				all = append(all, e)
			}
		}
	}
	slices.SortFunc(all, func(a, b recorded) int {
		return cmp.Or(cmp.Compare(a.rec.Position.Commit, b.rec.Position.Commit), cmp.Compare(a.rec.Position.Prepare, b.rec.Position.Prepare))
	})
	known, err := r.knownSources(ctx, org, all)
	if err != nil {
		return nil, err
	}
	return entries(all, known)
}

// Copies returns, in log order, the copy facts of the item ref names: the
// articles or events recorded as its copies and the copies split off it
// (the item's stream only). The caller has checked that org has the item.
// They are not entries of Item: the released document's entry types are a
// closed list, which a new type would break (docs/clients.md).
func (r *Reader) Copies(ctx context.Context, org uuid.UUID, kind domain.FeedKind, itemID uuid.UUID, ref domain.ItemRef) ([]Entry, error) {
	item, err := r.read(ctx, StreamItem, domain.ItemStream(kind, ref))
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for _, e := range item {
		entry := Entry{Position: e.rec.Position, Stream: e.stream, Type: e.rec.Type}
		switch ev := e.event.(type) {
		case domain.NewsItemAdded:
			if ev.ItemID != itemID || ev.OrganizationID != org {
				return nil, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
			}
			continue
		case domain.HappeningItemAdded:
			if ev.ItemID != itemID || ev.OrganizationID != org {
				return nil, &domain.NotFoundError{Resource: "item", ID: itemID.String()}
			}
			continue
		case domain.NewsItemCopyFound:
			entry.At, entry.Data = ev.At, copyFound{NewsPageID: &ev.NewsPageID, AttachmentID: ev.AttachmentID, SourceID: ev.SourceID,
				SourceType: ev.SourceType, URL: ev.Content.URL, Title: ev.Content.Title, DecidedBy: ev.By, Similarity: &ev.Similarity}
		case domain.HappeningItemCopyFound:
			entry.At, entry.Data = ev.At, copyFound{EventID: &ev.CopyID, AttachmentID: ev.AttachmentID, SourceID: ev.SourceID,
				SourceType: ev.SourceType, URL: ev.URL, Title: ev.Title}
		case domain.NewsItemCopySplit:
			entry.At, entry.Data = ev.At, copySplit{NewsPageID: &ev.NewsPageID, SplitItemID: ev.SplitItemID}
		case domain.HappeningItemCopySplit:
			entry.At, entry.Data = ev.At, copySplit{EventID: &ev.CopyID, SplitItemID: ev.SplitItemID}
		default:
			continue
		}
		out = append(out, entry)
	}
	return out, nil
}

func firstEvent(rs []recorded) domain.Event {
	if len(rs) == 0 {
		return nil
	}
	return rs[0].event
}

func (r *Reader) read(ctx context.Context, kind, name string) ([]recorded, error) {
	var out []recorded
	for rec, err := range stream.Read(ctx, r.store, name) {
		if err != nil {
			return nil, err
		}
		out = append(out, recorded{stream: kind, rec: rec.RecordedEvent, event: rec.Event})
	}
	return out, nil
}

// knownSources asks which of the sources the shared streams name org knows.
func (r *Reader) knownSources(ctx context.Context, org uuid.UUID, all []recorded) (map[uuid.UUID]bool, error) {
	ids := map[uuid.UUID]bool{}
	for _, e := range all {
		switch ev := e.event.(type) {
		case domain.ArticleDiscovered:
			ids[ev.SourceID] = true
		case domain.ArticleFoundOnSource:
			ids[ev.SourceID] = true
		case domain.HappeningDiscovered:
			ids[ev.SourceID] = true
		case domain.HappeningChanged:
			ids[ev.SourceID] = true
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return r.sources.KnownSources(ctx, org, slices.Collect(maps.Keys(ids)))
}

// entries summarizes the events in order; an event's summary may depend on
// the ones before it (what an EventChanged changed).
func entries(all []recorded, known map[uuid.UUID]bool) ([]Entry, error) {
	source := func(id uuid.UUID) *uuid.UUID {
		if !known[id] {
			return nil
		}
		return &id
	}
	var previous []byte // the event's details as last stated
	out := make([]Entry, 0, len(all))
	for _, e := range all {
		entry := Entry{Position: e.rec.Position, Stream: e.stream, Type: e.rec.Type}
		switch ev := e.event.(type) {
		case domain.NewsItemAdded:
			entry.At, entry.Data = ev.At, newsItemAdded{ev.ItemID, ev.AttachmentID, ev.SourceID, ev.SourceType, ev.NewsPageID, ev.VersionID, ev.Content.URL, ev.Content.Title}
		case domain.NewsItemCopyFound, domain.NewsItemCopySplit, domain.HappeningItemCopyFound, domain.HappeningItemCopySplit:
			// The released document's entry types are a closed list (a
			// oneOf): a new one would break clients that read it. The
			// copy facts are listed apart (Copies, include=copies).
			continue
		case domain.HappeningItemAdded:
			entry.At, entry.Data = ev.At, eventItemAdded{ev.ItemID, ev.AttachmentID, ev.SourceID, ev.SourceType, ev.HappeningID}
		case domain.HappeningItemLinked:
			entry.At, entry.Data = ev.At, eventItemLinked{ev.AttachmentID, ev.SourceID, ev.SourceType}
		case domain.FeedbackGiven:
			entry.At, entry.Data = ev.At, feedbackGiven{ev.FeedbackID, ev.Rating, ev.Comment}
		case domain.ArticleDiscovered:
			d := articleDiscovered{NewsPageID: ev.NewsPageID, VersionID: ev.VersionID, SourceID: source(ev.SourceID), URL: ev.Content.URL, Title: ev.Content.Title}
			if p := ev.Content.PublishedAt; p != nil {
				d.PublishedAt = shape.Timestamp(*p)
			}
			entry.At, entry.Data = ev.At, d
		case domain.ArticleFoundOnSource:
			if !known[ev.SourceID] {
				continue // another organization's source: not this one's history
			}
			entry.At, entry.Data = ev.At, articleFoundOnSource{ev.SourceID}
		case domain.HappeningDiscovered:
			d, err := json.Marshal(ev.Details)
			if err != nil {
				return nil, fmt.Errorf("encode details of event %s: %w", ev.HappeningID, err)
			}
			previous = d
			entry.At, entry.Data = ev.At, eventDiscovered{ev.HappeningID, source(ev.SourceID), ev.Details.Title}
		case domain.HappeningChanged:
			d, err := json.Marshal(ev.Details)
			if err != nil {
				return nil, fmt.Errorf("encode details of event %s: %w", ev.HappeningID, err)
			}
			changed, err := changedMembers(previous, d)
			if err != nil {
				return nil, fmt.Errorf("compare details of event %s: %w", ev.HappeningID, err)
			}
			previous = d
			entry.At, entry.Data = ev.At, eventChanged{ev.HappeningID, source(ev.SourceID), ev.Details.Title, changed}
		case domain.SourceDetached:
			entry.At, entry.Data = ev.At, sourceDetached{ev.AttachmentID}
		default:
			return nil, fmt.Errorf("item history: no summary of %s", e.rec.Type)
		}
		out = append(out, entry)
	}
	return out, nil
}

// changedMembers names the top-level members of the details that differ
// from the previous statement (all of them when there is none), sorted.
func changedMembers(before, after []byte) ([]string, error) {
	var b, a map[string]json.RawMessage
	if len(before) > 0 {
		if err := json.Unmarshal(before, &b); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(after, &a); err != nil {
		return nil, err
	}
	changed := []string{}
	keys := maps.Clone(a)
	maps.Copy(keys, b)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k == "rank" {
			continue // the rank of the document read, not the event (domain.HappeningDetails.Rank)
		}
		if !bytes.Equal(a[k], b[k]) {
			changed = append(changed, k)
		}
	}
	return changed, nil
}

// The summaries, one shape per event type. They are the API's JSON, so
// they keep its words: a happening is an "event" (eventId, eventDiscovered).
type (
	newsItemAdded struct {
		ItemID       uuid.UUID         `json:"itemId"`
		AttachmentID uuid.UUID         `json:"attachmentId"`
		SourceID     uuid.UUID         `json:"sourceId"`
		SourceType   domain.SourceType `json:"sourceType"`
		NewsPageID   uuid.UUID         `json:"newsPageId"`
		VersionID    uuid.UUID         `json:"versionId"`
		URL          string            `json:"url"`
		Title        string            `json:"title,omitempty"`
	}
	eventItemAdded struct {
		ItemID       uuid.UUID         `json:"itemId"`
		AttachmentID uuid.UUID         `json:"attachmentId"`
		SourceID     uuid.UUID         `json:"sourceId"`
		SourceType   domain.SourceType `json:"sourceType"`
		EventID      uuid.UUID         `json:"eventId"`
	}
	eventItemLinked struct {
		AttachmentID uuid.UUID         `json:"attachmentId"`
		SourceID     uuid.UUID         `json:"sourceId"`
		SourceType   domain.SourceType `json:"sourceType"`
	}
	feedbackGiven struct {
		FeedbackID uuid.UUID     `json:"feedbackId"`
		Rating     domain.Rating `json:"rating"`
		Comment    string        `json:"comment,omitempty"`
	}
	articleDiscovered struct {
		NewsPageID  uuid.UUID  `json:"newsPageId"`
		VersionID   uuid.UUID  `json:"versionId"`
		SourceID    *uuid.UUID `json:"sourceId,omitempty"`
		URL         string     `json:"url"`
		Title       string     `json:"title,omitempty"`
		PublishedAt string     `json:"publishedAt,omitempty"`
	}
	articleFoundOnSource struct {
		SourceID uuid.UUID `json:"sourceId"`
	}
	eventDiscovered struct {
		EventID  uuid.UUID  `json:"eventId"`
		SourceID *uuid.UUID `json:"sourceId,omitempty"`
		Title    string     `json:"title"`
	}
	eventChanged struct {
		EventID  uuid.UUID  `json:"eventId"`
		SourceID *uuid.UUID `json:"sourceId,omitempty"`
		Title    string     `json:"title"`
		// Changed names the members of the event's details (as stored)
		// that differ from what was stated before.
		Changed []string `json:"changed"`
	}
	sourceDetached struct {
		AttachmentID uuid.UUID `json:"attachmentId"`
	}
	// copyFound names the copy by newsPageId (news) or eventId (events).
	copyFound struct {
		NewsPageID   *uuid.UUID        `json:"newsPageId,omitempty"`
		EventID      *uuid.UUID        `json:"eventId,omitempty"`
		AttachmentID uuid.UUID         `json:"attachmentId"`
		SourceID     uuid.UUID         `json:"sourceId"`
		SourceType   domain.SourceType `json:"sourceType"`
		URL          string            `json:"url,omitempty"`
		Title        string            `json:"title,omitempty"`
		DecidedBy    string            `json:"decidedBy,omitempty"`
		Similarity   *float64          `json:"similarity,omitempty"`
	}
	copySplit struct {
		NewsPageID  *uuid.UUID `json:"newsPageId,omitempty"`
		EventID     *uuid.UUID `json:"eventId,omitempty"`
		SplitItemID uuid.UUID  `json:"splitItemId"`
	}
)
