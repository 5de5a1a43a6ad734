package domain

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain/search"
)

// FeedRules are a feed's keyword rules, each a query in the syntax of
// domain/search: an article enters a news feed only when its title,
// description or body text matches one of the include rules (any, when there are
// none) and none of the exclude rules, its words stemmed in its language
// as a list's q stems them; an event enters an event feed the same way by
// its title, description, venue, address and organizer, word for word
// (AdmitsHappening). Items already in the feed stay when the rules
// change; crawls and backfills offer articles and events the one way that
// applies them (package ingest, offerArticles and offerHappening).
type FeedRules struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
	include []search.Query
	exclude []search.Query
}

// maxRules bounds each list of rules: every article offered to the feed is
// matched against them.
const maxRules = 20

// ParseFeedRules validates rules; the errors name the offending rule
// (rules.include[2]) and never quote it. Rules left empty after trimming are
// refused like an empty q.
func ParseFeedRules(include, exclude []string) (FeedRules, error) {
	r := FeedRules{Include: []string{}, Exclude: []string{}}
	for _, list := range []struct {
		field  string
		in     []string
		out    *[]string
		parsed *[]search.Query
	}{{"rules.include", include, &r.Include, &r.include}, {"rules.exclude", exclude, &r.Exclude, &r.exclude}} {
		if len(list.in) > maxRules {
			return FeedRules{}, invalid(list.field, "must have at most "+strconv.Itoa(maxRules)+" rules")
		}
		for i, rule := range list.in {
			q, err := search.Parse(rule)
			var syntax *search.SyntaxError
			if errors.As(err, &syntax) {
				return FeedRules{}, invalid(list.field+"["+strconv.Itoa(i)+"]", syntax.Issue)
			} else if err != nil {
				return FeedRules{}, err
			}
			*list.out = append(*list.out, cleanText(rule))
			*list.parsed = append(*list.parsed, q)
		}
	}
	return r, nil
}

// IsZero is whether there are no rules: every article is admitted.
func (r FeedRules) IsZero() bool { return len(r.Include) == 0 && len(r.Exclude) == 0 }

// Equal is whether two sets of rules are written the same.
func (r FeedRules) Equal(o FeedRules) bool {
	return slices.Equal(r.Include, o.Include) && slices.Equal(r.Exclude, o.Exclude)
}

// Queries are the rules' queries in their canonical form (search.Query's
// String), include rules first: what a matcher tests an article against.
func (r FeedRules) Queries() []string {
	out := make([]string, 0, len(r.include)+len(r.exclude))
	for _, q := range slices.Concat(r.include, r.exclude) {
		out = append(out, q.String())
	}
	return out
}

// Decide is whether an article may enter the feed, given whether it
// matches each of Queries (matches[i] for Queries()[i]): one include rule
// at least (when there are any), no exclude rule.
func (r FeedRules) Decide(matches []bool) bool {
	if r.IsZero() {
		return true
	}
	include, exclude := matches[:len(r.include)], matches[len(r.include):]
	if len(include) > 0 && !slices.Contains(include, true) {
		return false
	}
	return !slices.Contains(exclude, true)
}

// Admits is whether an article of the title and description may enter
// the feed, its words compared without case or accents and without
// stemming. The crawler matches rules as q matches items instead, stemmed
// in the article's language, in Postgres (ingest/attachments, RulesMatch);
// this is the rules' meaning for text of no known language.
func (r FeedRules) Admits(title, description string) bool {
	if r.IsZero() {
		return true
	}
	return r.admitsText(search.Fold(title, description))
}

// AdmitsHappening is whether an event of details d may enter the event
// feed: its title, description, venue, address or organizer (d's
// SearchText) match the rules without regard to case or accents and
// without stemming, since events carry no language: as q matches an event
// list's items and a webhook's filter matches events.
func (r FeedRules) AdmitsHappening(d HappeningDetails) bool {
	if r.IsZero() {
		return true
	}
	return r.admitsText(search.Fold(d.SearchText()...))
}

func (r FeedRules) admitsText(text search.Text) bool {
	matches := make([]bool, 0, len(r.include)+len(r.exclude))
	for _, q := range slices.Concat(r.include, r.exclude) {
		matches = append(matches, q.Matches(text))
	}
	return r.Decide(matches)
}

// UnmarshalJSON reads stored rules, parsing them again.
func (r *FeedRules) UnmarshalJSON(b []byte) error {
	var raw struct{ Include, Exclude []string }
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	parsed, err := ParseFeedRules(raw.Include, raw.Exclude)
	if err != nil {
		return err
	}
	*r = parsed
	return nil
}

// FeedRulesChanged: a feed's rules were replaced (emptied, when
// Rules has none).
type FeedRulesChanged struct {
	Kind   FeedKind  `json:"-"`
	FeedID uuid.UUID `json:"feedId"`
	Rules  FeedRules `json:"rules"`
	At     time.Time `json:"at"`
}

func (e FeedRulesChanged) EventType() string { return e.Kind.eventPrefix() + "FeedRulesChanged" }

func init() {
	registerKinds(func(k FeedKind) Event { return &FeedRulesChanged{Kind: k} })
}
