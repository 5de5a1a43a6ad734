package sources_test

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
	"github.com/feedsvc/feedsvc/readmodel/sources"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestSourceRecordsAnswerAsEachOrganizationRegisteredThemBeforeAndAfterARebuild(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	acme, globex := uuid.New(), uuid.New()
	// Each organization's view of the records it registered, as the
	// commands answered it; site0 is registered by both, so it is one
	// record both know.
	views := map[uuid.UUID][]domain.SourceView{}
	for i, reg := range []struct {
		org  uuid.UUID
		site int
	}{{acme, 0}, {acme, 1}, {globex, 0}, {acme, 2}, {globex, 3}, {acme, 0}} {
		domainName := fmt.Sprintf("site%d.example", reg.site)
		r, _, err := cmds.RegisterSource(ctx, commands.RegisterSource{Org: reg.org, Request: domain.SourceRequest{SourceType: "site", Domain: &domainName}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 5 {
			if r.Created {
				t.Fatal("registering a known site again made a new record")
			}
			continue
		}
		r.SourceView.CreatedAt = r.SourceView.CreatedAt.Truncate(time.Microsecond).UTC()
		views[reg.org] = append(views[reg.org], r.SourceView)
	}
	shared, acmes, globexs := views[acme][0].ID, views[acme][1].ID, views[globex][1].ID
	if shared != views[globex][0].ID {
		t.Fatalf("two organizations registering site0 got records %s and %s, want one", shared, views[globex][0].ID)
	}
	projectortest.RunUntilCaughtUp(t, store, db, 2, sources.Projector{})
	q := sources.NewQueries(db.Bun)

	answers := func() map[uuid.UUID][]domain.SourceView {
		out := map[uuid.UUID][]domain.SourceView{}
		for _, org := range []uuid.UUID{acme, globex} {
			list, err := q.Sources(ctx, org)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list {
				v := s.View()
				v.CreatedAt = v.CreatedAt.UTC()
				out[org] = append(out[org], v)
				one, err := q.Source(ctx, org, s.ID)
				if err != nil || one.ID != s.ID {
					t.Errorf("Source(%s) answers %+v, %v", s.ID, one, err)
				}
			}
		}
		return out
	}
	live := answers()
	for org, want := range views {
		// Newest first, as Sources lists them.
		want = slices.Clone(want)
		slices.SortFunc(want, func(a, b domain.SourceView) int {
			return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID.String(), a.ID.String()))
		})
		got, _ := json.Marshal(live[org])
		w, _ := json.Marshal(want)
		if string(got) != string(w) {
			t.Errorf("organization %s lists\n%s\nwant\n%s", org, got, w)
		}
	}

	// A record another organization registered is not found, and is not
	// among those this one knows.
	var nf *domain.NotFoundError
	if _, err := q.Source(ctx, globex, acmes); !errors.As(err, &nf) {
		t.Errorf("acme's record asked for by globex answers %v, want not found", err)
	}
	known, err := q.KnownSources(ctx, globex, []uuid.UUID{shared, acmes, globexs, uuid.New()})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[uuid.UUID]bool{shared: true, globexs: true}; fmt.Sprint(known) != fmt.Sprint(want) {
		t.Errorf("globex knows %v, want %v", known, want)
	}

	projectortest.RebuildAnswersTheSame(t, dsn, db, store, sources.Projector{}, func() any { return answers() })
}
