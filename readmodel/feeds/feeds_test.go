package feeds_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// written is what the commands left of one feed: its state and its
// attachments as the write side answered them.
type written struct {
	org         uuid.UUID
	state       domain.FeedState
	attachments map[uuid.UUID]domain.Attachment
}

// at is a time as Postgres keeps it, for comparing.
func at(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

func TestTheFeedsReadModelAnswersWhatTheCommandsWroteBeforeAndAfterARebuild(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	orgs := []uuid.UUID{uuid.New(), uuid.New()}
	kept := map[uuid.UUID]*written{}
	var deleted []uuid.UUID
	for i := range 8 {
		kind := []domain.FeedKind{domain.FeedNews, domain.FeedHappenings}[i%2]
		org := orgs[i/6]
		state, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: kind, Org: org, Name: fmt.Sprintf("feed %d", i), Description: "d"})
		must(err)
		ref := commands.FeedRef{Kind: kind, Org: org, FeedID: state.ID}
		w := &written{org: org, state: state, attachments: map[uuid.UUID]domain.Attachment{}}
		// Attachments first: the feed's own row changes only with the
		// feed's events, so the last state a feed command answers is the
		// one to find.
		for s := range 1 + i%3 {
			site := fmt.Sprintf("site%d.example", (i+s)%4)
			att, _, err := cmds.AttachSource(ctx, commands.AttachSource{FeedRef: ref, Request: domain.SourceRequest{SourceType: "site", Domain: &site}})
			must(err)
			w.attachments[att.ID] = att
		}
		for id := range w.attachments {
			switch {
			case i%3 == 1:
				att, _, err := cmds.SetSourceEnabled(ctx, commands.SetSourceEnabled{FeedRef: ref, AttachmentID: id, Enabled: false})
				must(err)
				w.attachments[id] = att
			case i%3 == 2:
				_, err := cmds.DetachSource(ctx, commands.DetachSource{FeedRef: ref, AttachmentID: id})
				must(err)
				delete(w.attachments, id)
			}
			break
		}
		if i%2 == 0 {
			name, off := fmt.Sprintf("renamed %d", i), false
			w.state, _, err = cmds.UpdateFeed(ctx, commands.UpdateFeed{FeedRef: ref, Update: domain.FeedUpdate{Name: &name, Enabled: &off, By: domain.EnabledByAPI, Reason: "paused"}})
			must(err)
		}
		if i == 3 || i == 6 {
			_, err := cmds.DeleteFeed(ctx, ref)
			must(err)
			deleted = append(deleted, state.ID)
			continue
		}
		kept[state.ID] = w
	}
	projectortest.RunUntilCaughtUp(t, store, db, 4, feeds.Projector{})
	q := feeds.NewQueries(db.Bun)

	// answers asks every query of every feed the commands wrote.
	type feedAnswer struct {
		State       domain.FeedState
		Attachments []domain.Attachment
	}
	answers := func() map[string]any {
		out := map[string]any{}
		for _, org := range orgs {
			for _, kind := range []domain.FeedKind{domain.FeedNews, domain.FeedHappenings} {
				list, err := q.Feeds(ctx, kind, org)
				must(err)
				for _, f := range list {
					srcs, err := q.FeedSources(ctx, kind, org, f.ID)
					must(err)
					a := feedAnswer{State: f.State()}
					for _, s := range srcs {
						one, err := q.FeedSource(ctx, kind, org, f.ID, s.ID)
						must(err)
						if one.Attachment() != s.Attachment() {
							t.Errorf("attachment %s: FeedSource answers %+v, FeedSources %+v", s.ID, one.Attachment(), s.Attachment())
						}
						a.Attachments = append(a.Attachments, s.Attachment())
					}
					out[fmt.Sprintf("%s %s %s", org, kind, f.ID)] = a
				}
			}
		}
		gone, err := q.Gone(ctx, append(slices.Clone(deleted), slices.Collect(func(yield func(uuid.UUID) bool) {
			for id := range kept {
				if !yield(id) {
					return
				}
			}
		})...))
		must(err)
		out["gone"] = gone
		return out
	}

	live := answers()
	for id, w := range kept {
		got, ok := live[fmt.Sprintf("%s %s %s", w.org, w.state.Kind, id)].(feedAnswer)
		if !ok {
			t.Errorf("feed %s is not listed", id)
			continue
		}
		want := w.state
		want.CreatedAt, want.UpdatedAt = at(want.CreatedAt), at(want.UpdatedAt)
		got.State.CreatedAt, got.State.UpdatedAt = at(got.State.CreatedAt), at(got.State.UpdatedAt)
		if !same(t, got.State, want) {
			t.Errorf("feed %s answers %+v, want %+v", id, got.State, want)
		}
		wantAtts := slices.Collect(func(yield func(domain.Attachment) bool) {
			for _, a := range w.attachments {
				a.CreatedAt, a.UpdatedAt = at(a.CreatedAt), at(a.UpdatedAt)
				if !yield(a) {
					return
				}
			}
		})
		// Newest first, as FeedSources lists them.
		slices.SortFunc(wantAtts, func(a, b domain.Attachment) int {
			return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID.String(), a.ID.String()))
		})
		for i := range got.Attachments {
			got.Attachments[i].CreatedAt, got.Attachments[i].UpdatedAt = at(got.Attachments[i].CreatedAt), at(got.Attachments[i].UpdatedAt)
		}
		if !same(t, got.Attachments, wantAtts) {
			t.Errorf("feed %s lists attachments\n%+v\nwant\n%+v", id, got.Attachments, wantAtts)
		}
	}
	if n := len(live) - 1; n != len(kept) {
		t.Errorf("%d feeds listed, want the %d not deleted", n, len(kept))
	}
	if gone := live["gone"].([]uuid.UUID); !sameSet(gone, deleted) {
		t.Errorf("Gone answers %v, want the deleted %v", gone, deleted)
	}
	for _, id := range deleted {
		var nf *domain.NotFoundError
		if _, err := q.Feed(ctx, domain.FeedNews, orgs[0], id); !errors.As(err, &nf) {
			t.Errorf("deleted feed %s: Feed answers %v, want not found", id, err)
		}
	}
	// Another organization's feed is missing to this one.
	var other uuid.UUID
	for id, w := range kept {
		if w.org == orgs[1] {
			other = id
		}
	}
	if missing, ok, err := q.MissingFeed(ctx, kept[other].state.Kind, orgs[0], []uuid.UUID{other}); err != nil || !ok || missing != other {
		t.Errorf("MissingFeed of another organization's feed answers %s %v %v, want it missing", missing, ok, err)
	}

	projectortest.RebuildAnswersTheSame(t, dsn, db, store, feeds.Projector{}, func() any { return answers() })
}

// same compares two answers as the API would write them (a config is a
// pointer, compared by what it holds).
func same(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

func sameSet(a, b []uuid.UUID) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(id uuid.UUID) bool { return !slices.Contains(b, id) })
}
