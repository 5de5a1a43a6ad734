package projectors_test

import (
	"slices"
	"testing"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/feeds"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

func TestEveryStoredEventTypeIsReadBySomeProjector(t *testing.T) {
	read := map[string]bool{}
	for _, p := range projectors.All() {
		for _, name := range projections.EventTypes(p) {
			read[name] = true
		}
	}
	for _, name := range domain.EventTypeNames() {
		if !read[name] {
			t.Errorf("no projector reads %s: its facts never reach a read model", name)
		}
	}
}

func TestAProjectorSubscribesToExactlyWhatItsHandlersTake(t *testing.T) {
	got := projections.EventTypes(feeds.Projector{})
	for _, want := range []string{"NewsFeedCreated", "EventFeedCreated", "NewsSourceDetached", "EventSourceDetached"} {
		if !slices.Contains(got, want) {
			t.Errorf("feeds handles %s's Go type but does not subscribe to it: %v", want, got)
		}
	}
	if slices.Contains(got, "NewsItemAdded") {
		t.Errorf("feeds subscribes to NewsItemAdded without handling it: %v", got)
	}
}

func TestEveryReadModelTableHasOneOwner(t *testing.T) {
	owner := map[string]string{}
	for _, p := range projectors.All() {
		for _, table := range p.Tables() {
			if other, taken := owner[table]; taken {
				t.Errorf("table %s is owned by both %s and %s", table, other, p.Name())
			}
			owner[table] = p.Name()
		}
	}
}

// Writes wait for every projector but those that declare themselves
// Unwaited: the list is derived, so a new read model the API reads is
// waited for without being named anywhere.
func TestWritesWaitForEveryProjectorButTheUnwaited(t *testing.T) {
	waited := map[string]bool{}
	for _, p := range projectors.Consistent() {
		waited[p.Name()] = true
	}
	for _, p := range projectors.All() {
		_, unwaited := p.(projections.Unwaited)
		if waited[p.Name()] == unwaited {
			t.Errorf("projector %s: waited for %v, declares Unwaited %v", p.Name(), waited[p.Name()], unwaited)
		}
	}
	if waited["articles"] || !waited["newsitems"] || !waited["ingestion"] || !waited["orglog"] {
		t.Errorf("waited for %v: want every projector the API reads (newsitems, ingestion, orglog for GET /log, …) and not articles", waited)
	}
}

// The service's waiter waits for exactly the projectors Consistent names:
// every registered projector but those that declare themselves Unwaited.
func TestTheServiceWaitsForEveryRegisteredProjectorButTheUnwaited(t *testing.T) {
	h := servicetest.Start(t)
	waited := h.Service.Waiter.WaitsFor()
	for _, p := range projectors.All() {
		_, unwaited := p.(projections.Unwaited)
		if slices.Contains(waited, p.Name()) == unwaited {
			t.Errorf("projector %s: the service waits for it %v, it declares Unwaited %v", p.Name(), !unwaited, unwaited)
		}
	}
	for _, name := range waited {
		if _, ok := projectors.ByName(name); !ok {
			t.Errorf("the service waits for %s, which is not registered", name)
		}
	}
}
