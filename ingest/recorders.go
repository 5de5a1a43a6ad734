package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/calendar"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// The recorders: what is done with each crawled document. Its article is
// recorded through commands (articleRecorder), and it is read for the
// happenings it holds, each recorded through commands too (happeningReader);
// New builds both from Parts.Commands.

// articleRecorder records what crawls find as articles.
type articleRecorder struct{ cmds *commands.Handler }

func (a articleRecorder) RecordArticles(ctx context.Context, found []FoundArticle) ([]RecordedArticle, error) {
	cs := make([]commands.DiscoverArticle, len(found))
	for i, f := range found {
		cs[i] = commands.DiscoverArticle{SourceID: f.SourceID, Content: f.Content, LastMod: f.LastMod}
	}
	ds, _, err := a.cmds.DiscoverArticles(ctx, cs)
	if err != nil {
		return nil, err
	}
	out := make([]RecordedArticle, len(ds))
	for i, d := range ds {
		out[i] = RecordedArticle{ArticleDiscovered: d.ArticleDiscovered, New: d.New}
	}
	return out, nil
}

func (a articleRecorder) ArticleText(ctx context.Context, canonicalURL string) (string, error) {
	return a.cmds.ArticleText(ctx, canonicalURL)
}

// happeningReader reads documents for events (ingest/calendar) within the
// document bounds and records them through commands.
type happeningReader struct {
	cmds   *commands.Handler
	log    *slog.Logger
	limits calendar.Limits
}

func (s happeningReader) ReadHappenings(doc document.Document) (DocumentHappenings, error) {
	found, err := calendar.Extract(doc, calendar.Options{Now: time.Now(), Limits: s.limits})
	if err != nil {
		return DocumentHappenings{}, fmt.Errorf("extract events of %s: %w", doc.URL, err)
	}
	if found.CutOff != nil {
		s.log.Warn("document cut off: what fitted is kept", "url", doc.URL, "bound", found.CutOff.Bound, "limit", found.CutOff.Limit, "events", len(found.Happenings))
	}
	if found.Dropped > 0 {
		s.log.Info("events without what an event needs were dropped", "url", doc.URL, "dropped", found.Dropped)
	}
	out := DocumentHappenings{Calendars: found.Calendars, Happenings: make([]StatedHappening, len(found.Happenings))}
	if found.CutOff != nil {
		out.CutOff = found.CutOff.String()
	}
	for i, d := range found.Happenings {
		// The details keep their document's rank, which merging the
		// listings of one event item goes by (domain.MergeHappenings).
		d.Rank = calendar.Precedence(doc, d)
		out.Happenings[i] = StatedHappening{ID: domain.HappeningID(d.Identity), Details: d, Precedence: d.Rank}
	}
	return out, nil
}

func (s happeningReader) RecordHappening(ctx context.Context, sourceID uuid.UUID, e StatedHappening, deferred bool) (RecordedHappening, error) {
	ev, _, err := s.cmds.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: sourceID, Details: e.Details, OnlyIfNew: deferred})
	if err != nil {
		return RecordedHappening{}, err
	}
	return RecordedHappening{ID: ev.HappeningID, ChangedAt: ev.At, LastEnd: ev.Details.LastEnd(), Details: &ev.Details}, nil
}

func (s happeningReader) HappeningDetails(ctx context.Context, id uuid.UUID) (domain.HappeningDetails, bool, error) {
	return s.cmds.HappeningDetails(ctx, id)
}
