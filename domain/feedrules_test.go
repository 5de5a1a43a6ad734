package domain_test

import (
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
	events, err = ev.Update(domain.FeedUpdate{Rules: &rules}, now)
	if err != nil || len(events) != 1 || events[0].EventType() != "EventFeedRulesChanged" {
		t.Fatalf("setting an event feed's rules decided %v, %v", events, err)
	}
	ev.Apply(events[0])
	if !ev.State().Rules.Equal(rules) {
		t.Fatalf("the event feed's state holds rules %+v", ev.State().Rules)
	}
}

// An event feed's rules read an event's title, description, venue,
// address and organizer, word for word (events carry no language).
func TestEventFeedRulesReadAnEventsTitleDescriptionVenueAddressAndOrganizer(t *testing.T) {
	jazz := domain.HappeningDetails{Title: "Late night session", Description: "Three sets.",
		Location:  &domain.Location{Venue: &domain.Venue{Name: "Blue Note Hall", Address: "Kaiweg 3, Hamburg"}, DisplayAddress: "Kaiweg 3, Hamburg"},
		Organizer: &domain.Organizer{Name: "Jazz Society"}}
	cases := []struct {
		name             string
		include, exclude []string
		want             bool
	}{
		{"a word of the organizer", []string{"jazz"}, nil, true},
		{"a word of the venue", []string{`"blue note"`}, nil, true},
		{"a word of the address, without its accent or case", []string{"HAMBURG"}, nil, true},
		{"a word of the description", []string{"sets"}, nil, true},
		{"no stemming: a plural the text does not have", []string{"societies"}, nil, false},
		{"a word it does not have", []string{"chess"}, nil, false},
		{"an exclusion of the venue's word", nil, []string{"hall"}, false},
		{"no rules", nil, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := domain.ParseFeedRules(tc.include, tc.exclude)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.AdmitsHappening(jazz); got != tc.want {
				t.Errorf("admits %v, want %v", got, tc.want)
			}
		})
	}
}
