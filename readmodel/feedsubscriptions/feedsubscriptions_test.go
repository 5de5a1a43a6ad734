package feedsubscriptions_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/feedsubscriptions"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// address is a subscription address the test made, with the secret only
// its holder knows.
type address struct {
	created feedsubscriptions.Subscription
	secret  []byte
	revoked bool
}

func TestSubscriptionAddressesAnswerWhatTheCommandsWroteBeforeAndAfterARebuild(t *testing.T) {
	db, dsn := testdb.New(t)
	store, cmds := projectortest.Commands(db)
	ctx := context.Background()
	org := uuid.New()
	var refs []commands.FeedRef
	for _, kind := range []domain.FeedKind{domain.FeedNews, domain.FeedHappenings} {
		f, _, err := cmds.CreateFeed(ctx, commands.CreateFeed{Kind: kind, Org: org, Name: "f", Description: "d"})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, commands.FeedRef{Kind: kind, Org: org, FeedID: f.ID})
	}
	var made []*address
	for i := range 6 {
		ref := refs[i%2]
		secret := []byte(fmt.Sprintf("secret %d %s", i, uuid.New()))
		sum := sha256.Sum256(secret)
		prefix := fmt.Sprintf("p%d%s", i, uuid.New().String()[:8])
		c, _, err := cmds.CreateFeedSubscription(ctx, commands.CreateFeedSubscription{FeedRef: ref, Prefix: prefix, SecretHash: hex.EncodeToString(sum[:])})
		if err != nil {
			t.Fatal(err)
		}
		a := &address{secret: secret, created: feedsubscriptions.Subscription{ID: c.SubscriptionID, OrganizationID: org, FeedKind: ref.Kind,
			FeedID: ref.FeedID, Prefix: prefix, SecretHash: sum[:], CreatedAt: c.At.Truncate(time.Microsecond).UTC()}}
		if i%3 == 1 {
			if _, err := cmds.RevokeFeedSubscription(ctx, commands.RevokeFeedSubscription{FeedRef: ref, ID: c.SubscriptionID}); err != nil {
				t.Fatal(err)
			}
			a.revoked = true
		}
		made = append(made, a)
	}
	projectortest.RunUntilCaughtUp(t, store, db, 3, feedsubscriptions.Projector{})
	q := feedsubscriptions.NewQueries(db.Bun)

	answers := func() map[string]any {
		out := map[string]any{}
		for _, ref := range refs {
			list, err := q.List(ctx, org, ref.Kind, ref.FeedID)
			if err != nil {
				t.Fatal(err)
			}
			for i := range list {
				list[i].CreatedAt = list[i].CreatedAt.UTC()
			}
			out[ref.FeedID.String()] = list
		}
		for _, a := range made {
			s, err := q.Authenticate(ctx, a.created.Prefix, a.secret)
			out[a.created.Prefix] = fmt.Sprint(s.ID, err)
		}
		return out
	}
	live := answers()
	for _, ref := range refs {
		var want []feedsubscriptions.Subscription
		for _, a := range made {
			if !a.revoked && a.created.FeedID == ref.FeedID {
				want = append(want, a.created) // made oldest first, as List answers
			}
		}
		if got := fmt.Sprint(live[ref.FeedID.String()]); got != fmt.Sprint(want) {
			t.Errorf("the %s feed lists\n%s\nwant\n%v", ref.Kind, got, want)
		}
	}
	for _, a := range made {
		want := fmt.Sprint(a.created.ID, nil)
		if a.revoked {
			want = fmt.Sprint(uuid.Nil, feedsubscriptions.ErrUnknown)
		}
		if got := live[a.created.Prefix]; got != want {
			t.Errorf("address %s (revoked %v) authenticates as %v, want %v", a.created.Prefix, a.revoked, got, want)
		}
		if _, err := q.Authenticate(ctx, a.created.Prefix, append(a.secret, 'x')); !errors.Is(err, feedsubscriptions.ErrUnknown) {
			t.Errorf("address %s with a wrong secret answers %v, want ErrUnknown", a.created.Prefix, err)
		}
	}
	if _, err := q.Authenticate(ctx, "never-issued", []byte("x")); !errors.Is(err, feedsubscriptions.ErrUnknown) {
		t.Errorf("a prefix never issued answers %v, want ErrUnknown", err)
	}

	projectortest.RebuildAnswersTheSame(t, dsn, db, store, feedsubscriptions.Projector{}, func() any { return answers() })
}
