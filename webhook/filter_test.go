package webhook_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// subscribeFiltered creates a webhook of every feed whose items must match
// filter.
func (s *stack) subscribeFiltered(url, filter string) uuid.UUID {
	s.t.Helper()
	ctx := context.Background()
	secretID, _, err := s.svc.Secrets().Create(ctx, s.org, uuid.Must(uuid.NewV7()))
	if err != nil {
		s.t.Fatal(err)
	}
	config, err := domain.NewWebhookConfig(domain.WebhookRequest{
		URL: &url, Events: &[]string{domain.WebhookItemAdded}, Filter: &filter, Targets: domain.TargetPolicy{AllowPrivateNetworks: true},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	w, err := commands.Visible(ctx, s.waiter, func(ctx context.Context) (domain.WebhookState, commands.Result, error) {
		return s.cmds.CreateWebhook(ctx, commands.CreateWebhook{Org: s.org, SecretID: secretID, Config: config})
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return w.ID
}

// A webhook with a filter gets only the items whose event matches it;
// one without gets every item, and changing the filter applies to the
// items added after the change.
func TestAFilteredWebhookGetsOnlyTheMatchingItems(t *testing.T) {
	s := newStack(t, testConfig())
	feed := uuid.New()
	all, jazz, notJazz := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	s.subscribe(all.URL)
	jazzID := s.subscribeFiltered(jazz.URL, `jazz OR "string quartet"`)
	notJazzID := s.subscribeFiltered(notJazz.URL, "concert -jazz")

	jazzEvent, _ := s.addItem(feed, "Jazz night at the Café")
	quartet, _ := s.addItem(feed, "A string quartet plays Haydn")
	concert, _ := s.addItem(feed, "Organ concert")
	jazzConcert, _ := s.addItem(feed, "Jazz concert")
	s.addItem(feed, "Chess tournament")

	// An item's deliveries to every webhook are queued in one transaction:
	// once the unfiltered webhook has all five, the delivery logs of the
	// filtered ones are complete.
	wait.Until(t, 20*time.Second, "the five items at the webhook without a filter", func() bool { return len(all.requests()) == 5 })
	queued := func(hook uuid.UUID) []string {
		list, _, err := s.svc.Deliveries(context.Background(), s.org, hook, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range list {
			out = append(out, d.EventID.String())
		}
		slices.Sort(out)
		return out
	}
	want := []string{jazzEvent.String(), quartet.String(), jazzConcert.String()}
	slices.Sort(want)
	if got := queued(jazzID); !slices.Equal(got, want) {
		t.Errorf("the jazz webhook's deliveries are of %v, want %v", got, want)
	}
	if got := queued(notJazzID); !slices.Equal(got, []string{concert.String()}) {
		t.Errorf("the concert-but-not-jazz webhook's deliveries are of %v, want only %s", got, concert)
	}
	wait.Until(t, 20*time.Second, "the jazz webhook's three requests", func() bool { return len(jazz.requests()) == 3 })

	// A changed filter applies from then on.
	filter := "chess"
	if _, err := commands.Visible(context.Background(), s.waiter, func(ctx context.Context) (domain.WebhookState, commands.Result, error) {
		return s.cmds.UpdateWebhook(ctx, commands.UpdateWebhook{WebhookRef: ref(s.org, notJazzID), Update: domain.WebhookUpdate{
			Request: domain.WebhookRequest{Filter: &filter},
		}})
	}); err != nil {
		t.Fatal(err)
	}
	chess, _ := s.addItem(feed, "Chess club night")
	s.addItem(feed, "Another concert")
	wait.Until(t, 20*time.Second, "the seven items at the webhook without a filter", func() bool { return len(all.requests()) == 7 })
	want = []string{concert.String(), chess.String()}
	slices.Sort(want)
	if got := queued(notJazzID); !slices.Equal(got, want) {
		t.Errorf("after the change the webhook's deliveries are of %v, want %v", got, want)
	}
}

func TestAWebhookFilterThatIsNoQueryIsRefusedNamingFilter(t *testing.T) {
	for _, filter := range []string{"-jazz", `"" ()`, strings.Repeat("jazz ", 60)} {
		url := "https://hooks.example.com/in"
		_, err := domain.NewWebhookConfig(domain.WebhookRequest{URL: &url, Events: &[]string{domain.WebhookItemAdded}, Filter: &filter})
		var invalid *domain.ValidationError
		if !errors.As(err, &invalid) || invalid.Field != "filter" {
			t.Errorf("filter of %d bytes: %v, want a validation error naming filter", len(filter), err)
		}
	}
}
