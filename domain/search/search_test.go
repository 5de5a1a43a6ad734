package search_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/feedsvc/feedsvc/domain/search"
)

func TestQueriesParseToTheirCanonicalForm(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"one word", "climate", `"climate"`},
		{"words are all required", "climate policy", `"climate" "policy"`},
		{"case is dropped", "Climate POLICY", `"climate" "policy"`},
		{"a quoted phrase stays one term", `"climate policy" now`, `"climate policy" "now"`},
		{"OR joins the terms beside it", "climate OR weather", `"climate" OR "weather"`},
		{"OR binds tighter than a space", "a b OR c", `"a" "b" OR "c"`},
		{"OR chains", "a OR b OR c", `"a" OR "b" OR "c"`},
		{"lower-case or is a word", "a or b", `"a" "or" "b"`},
		{"a minus excludes a word", "climate -sport", `"climate" -"sport"`},
		{"a minus excludes a phrase", `climate -"world cup"`, `"climate" -"world cup"`},
		{"a lone minus is punctuation", "climate - sport", `"climate" "sport"`},
		{"a hyphenated word is a phrase", "covid-19", `"covid 19"`},
		{"an OR at the start is ignored", "OR climate", `"climate"`},
		{"an OR at the end is ignored", "climate OR", `"climate"`},
		{"an OR before an exclusion is ignored", "climate OR -sport", `"climate" -"sport"`},
		{"an OR after an exclusion is ignored", "climate -sport OR rain", `"climate" "rain" -"sport"`},
		{"an open quote runs to the end", `"climate policy`, `"climate policy"`},
		{"punctuation around words is dropped", "(climate), policy!", `"climate" "policy"`},
		{"accents are kept for stemming", "Café Müller", `"café" "müller"`},
		{"a decomposed accent is composed", "cafe\u0301", `"café"`},
		{"operators of Postgres are punctuation", "a & !b | c:* <->", `"a" "b" "c"`},
		{"tabs and line breaks separate terms", "a\tb\nc", `"a" "b" "c"`},
		{"scripts without spaces stay one word", "東京", `"東京"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := search.Parse(c.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := q.String(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
			again, err := search.Parse(q.String())
			if err != nil || again.String() != c.want {
				t.Errorf("the canonical form reads back as %s (%v)", again.String(), err)
			}
		})
	}
}

func TestBadQueriesAreRefusedWithoutQuotingThem(t *testing.T) {
	cases := []struct {
		name, in, issue string
	}{
		{"nothing at all", "", "must name a word or phrase to look for"},
		{"spaces only", "   ", "must name a word or phrase to look for"},
		{"punctuation only", `"" - !! ()`, "must name a word or phrase to look for"},
		{"OR alone", "OR", "must name a word or phrase to look for"},
		{"exclusions alone", "-sport -\"world cup\"", "not only ones to exclude"},
		{"too long", strings.Repeat("a", search.MaxLength+1), "at most 256 characters"},
		{"too many terms", strings.Repeat("a ", search.MaxTerms+1), "at most 16 words"},
		{"a control character", "a\x00b", "control characters"},
		{"not UTF-8", "caf\xe9", "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := search.Parse(c.in)
			var syntax *search.SyntaxError
			if !errors.As(err, &syntax) {
				t.Fatalf("got %v, want a SyntaxError", err)
			}
			if !strings.Contains(syntax.Issue, c.issue) {
				t.Errorf("issue %q does not say %q", syntax.Issue, c.issue)
			}
			if c.in != "" && strings.TrimSpace(c.in) != "" && strings.Contains(syntax.Issue, c.in) {
				t.Errorf("issue %q quotes the query", syntax.Issue)
			}
		})
	}
}

func TestTheLongestQueryIsAccepted(t *testing.T) {
	in := strings.Repeat("é", search.MaxLength) // characters, not bytes
	if _, err := search.Parse(in); err != nil {
		t.Fatalf("a query of %d characters: %v", search.MaxLength, err)
	}
}

func TestQueriesMatchTextsAsWebSearchDoes(t *testing.T) {
	title, body := "Café owners protest new climate policy", "The city council met on Tuesday; the world cup final was on TV."
	cases := []struct {
		name, query string
		want        bool
	}{
		{"a word in the title", "climate", true},
		{"a word in the description", "tuesday", true},
		{"every word must match", "climate football", false},
		{"words match in any order", "policy climate", true},
		{"a phrase must be in order", `"climate policy"`, true},
		{"a phrase out of order does not match", `"policy climate"`, false},
		{"a phrase does not span two fields", `"policy the"`, false},
		{"either side of OR matches", "football OR council", true},
		{"neither side of OR matches", "football OR tennis", false},
		{"an excluded word rules the text out", "climate -council", false},
		{"an absent excluded word does not", "climate -football", true},
		{"an excluded phrase rules the text out", `climate -"world cup"`, false},
		{"accents are ignored in the query", "cafe", true},
		{"accents are ignored in the text", "CAFÉ", true},
		{"no stemming: another form does not match", "protests", false},
		{"a word is whole, not a prefix", "clim", false},
	}
	text := search.Fold(title, body)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := search.Parse(c.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := q.Matches(text); got != c.want {
				t.Errorf("Matches = %v, want %v", got, c.want)
			}
		})
	}
}

func TestTheZeroQueryMatchesEverything(t *testing.T) {
	var q search.Query
	if !q.IsZero() || !q.Matches(search.Fold("anything")) || !q.Matches(search.Fold()) {
		t.Error("the zero query must match every text")
	}
}

// FuzzParse: no input panics Parse, an accepted query is bounded and its
// canonical form holds nothing but words, spaces, quotes, '-' and "or",
// and reads back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"climate policy", `"a b" OR c -d`, `-"`, "OR OR", "a\x00", "東京 -\"x", "- -- ---a", `"""`, "caf\xe9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := search.Parse(s)
		if err != nil {
			var syntax *search.SyntaxError
			if !errors.As(err, &syntax) {
				t.Fatalf("error of another type: %v", err)
			}
			return
		}
		if utf8.RuneCountInString(s) > search.MaxLength || len(q.All) == 0 {
			t.Fatalf("accepted a query beyond the bounds")
		}
		canon := q.String()
		for _, r := range canon {
			if !strings.ContainsRune(`"- `, r) && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
				t.Fatalf("canonical form %q holds %q", canon, r)
			}
		}
		if utf8.RuneCountInString(canon) > search.MaxLength {
			return // quoting made it longer than a query may be
		}
		again, err := search.Parse(canon)
		if err != nil || again.String() != canon {
			t.Fatalf("canonical form %q reads back as %q (%v)", canon, again.String(), err)
		}
		q.Matches(search.Fold(s, canon))
	})
}
