package projections_test

import (
	"slices"
	"testing"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/projections"
)

func TestEveryStoredEventTypeIsReadBySomeProjector(t *testing.T) {
	read := map[string]bool{}
	for _, p := range projections.All() {
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
	got := projections.EventTypes(projections.Feeds{})
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
	for _, p := range projections.All() {
		for _, table := range p.Tables() {
			if other, taken := owner[table]; taken {
				t.Errorf("table %s is owned by both %s and %s", table, other, p.Name())
			}
			owner[table] = p.Name()
		}
	}
}
