package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

func TestFeedRulesAdmitWhatIncludesMatchAndNoExcludeDoes(t *testing.T) {
	rules, err := domain.ParseFeedRules([]string{"climate OR weather", `"heat wave"`}, []string{"sport", `"transfer window"`})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, title, description string
		want                     bool
	}{
		{"an include in the title", "Climate report", "", true},
		{"an include in the description", "Report", "The weather turns", true},
		{"the second include", "A heat wave arrives", "", true},
		{"no include", "Celebrity gossip", "Who wore what", false},
		{"an include and an exclude", "Climate of fear in sport", "", false},
		{"an excluded phrase", "Weather delays the transfer window", "", false},
		{"the excluded words apart", "Weather: window of sun, transfer by bus", "", true},
		{"case and a dotted capital I folded", "CLİMATE", "", true},
		{"accents ignored", "Wéather report", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rules.Admits(c.title, c.description); got != c.want {
				t.Errorf("Admits = %v, want %v", got, c.want)
			}
		})
	}
	if !(domain.FeedRules{}).Admits("anything", "") {
		t.Error("no rules must admit every article")
	}
	excludeOnly, _ := domain.ParseFeedRules(nil, []string{"sport"})
	if !excludeOnly.Admits("Politics", "") || excludeOnly.Admits("Sport news", "") {
		t.Error("exclude rules alone admit all but what they match")
	}
}

func TestChangingAFeedsRulesIsAnEventOnlyWhenTheyChange(t *testing.T) {
	f := domain.NewFeed(domain.FeedNews)
	now := time.Now()
	events, err := f.Create(uuid.New(), uuid.New(), "n", "d", domain.FeedOptions{}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		f.Apply(e)
	}
	rules, _ := domain.ParseFeedRules([]string{"climate"}, nil)
	events, err = f.Update(domain.FeedUpdate{Rules: &rules}, now)
	if err != nil || len(events) != 1 {
		t.Fatalf("setting rules decided %v, %v", events, err)
	}
	if _, ok := events[0].(domain.FeedRulesChanged); !ok || events[0].EventType() != "FeedRulesChanged" && events[0].EventType() != "NewsFeedRulesChanged" {
		t.Fatalf("decided %T %s", events[0], events[0].EventType())
	}
	f.Apply(events[0])
	if !f.State().Rules.Equal(rules) {
		t.Fatalf("the state holds rules %+v", f.State().Rules)
	}
	same, _ := domain.ParseFeedRules([]string{"climate"}, []string{})
	if events, _ := f.Update(domain.FeedUpdate{Rules: &same}, now); len(events) != 0 {
		t.Errorf("the same rules again decided %v", events)
	}
	ev := domain.NewFeed(domain.FeedHappenings)
	events, _ = ev.Create(uuid.New(), uuid.New(), "n", "d", domain.FeedOptions{}, now)
	for _, e := range events {
		ev.Apply(e)
	}
	var invalid *domain.ValidationError
	if _, err := ev.Update(domain.FeedUpdate{Rules: &rules}, now); !errors.As(err, &invalid) || invalid.Field != "rules" {
		t.Errorf("an event feed's rules: %v", err)
	}
}
