package nearcopy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

func TestAddressesThatNameOnePageAreOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"tracking parameters are dropped", "https://news.example/a/story?utm_source=x&fbclid=1", "https://news.example/a/story", true},
		{"an AMP path ending is dropped", "https://news.example/a/story/amp/", "https://news.example/a/story", true},
		{"an AMP host and query are dropped", "https://amp.news.example/a/story?outputType=amp", "http://www.news.example/a/story/", true},
		{"a print version is one page", "https://news.example/a/story/print", "https://news.example/a/story", true},
		{"a leading amp segment is dropped", "https://news.example/amp/a/story", "https://news.example/a/story", true},
		{"a query that names the page stays", "https://news.example/article?id=1", "https://news.example/article?id=2", false},
		{"another path is another page", "https://news.example/a/story-1", "https://news.example/a/story-2", false},
		{"another site is another page", "https://news.example/a/story", "https://other.example/a/story", false},
		{"a non-default port stays", "https://news.example:8443/a", "https://news.example/a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nearcopy.SameAddress(tc.a, tc.b); got != tc.same {
				t.Errorf("SameAddress(%q, %q) = %v (%q, %q)", tc.a, tc.b, got, nearcopy.NormalAddress(tc.a), nearcopy.NormalAddress(tc.b))
			}
		})
	}
}

func TestASignatureSurvivesItsStoredForm(t *testing.T) {
	long := nearcopy.Sign("A title", strings.Repeat("one two three four five six seven eight nine ten ", 8))
	short := nearcopy.Sign("A title", "too short to compare")
	for _, s := range []nearcopy.Signature{long, short} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back nearcopy.Signature
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back.String() != s.String() || back.Comparable() != s.Comparable() {
			t.Errorf("%s read back as %s", s, back)
		}
	}
	if !long.Comparable() || short.Comparable() {
		t.Errorf("comparable: long %v, short %v", long.Comparable(), short.Comparable())
	}
	for _, bad := range []string{"", "x1.3", "m1.x", "m1.80.AAAA"} {
		if _, err := nearcopy.ParseSignature(bad); err == nil {
			t.Errorf("ParseSignature(%q) took it", bad)
		}
	}
}

func TestShortTextsAreNeverCopiesByText(t *testing.T) {
	body := "Watch the full video above. Sign up for our newsletter to get the day's top videos."
	a := nearcopy.Page{URL: "https://a.example/1", Title: "Watch: mayor speaks", Signature: nearcopy.Sign("Watch: mayor speaks", body)}
	b := nearcopy.Page{URL: "https://b.example/2", Title: "Watch: mayor speaks", Signature: nearcopy.Sign("Watch: mayor speaks", body)}
	if v := nearcopy.Compare(a, b); v.Copy {
		t.Errorf("two short pages with one text and title are copies: %+v", v)
	}
}

func TestSimilarHeadlinesOverDifferentTextsAreTwoStories(t *testing.T) {
	approve := "The city council voted on Tuesday night to approve the budget after a long debate. The plan raises the property tax rate by two percent and hires twelve new teachers for the district's crowded schools. Supporters said the schools could not wait another year. The mayor will sign it on Friday, and the money will be spent starting in July, when the fiscal year begins."
	reject := "The county council voted on Monday to reject the budget its finance committee had proposed in March. Members objected to cuts in bus service on the north side and asked for a new plan within a month. Without a budget by July the county keeps spending at last year's levels. The committee chair said she was disappointed but would start again on Wednesday."
	a := nearcopy.Page{URL: "https://a.example/approve", Title: "Council approves budget", Signature: nearcopy.Sign("Council approves budget", approve)}
	b := nearcopy.Page{URL: "https://b.example/reject", Title: "Council rejects budget", Signature: nearcopy.Sign("Council rejects budget", reject)}
	if !a.Signature.Comparable() || !b.Signature.Comparable() {
		t.Fatal("the texts are too short for the test to mean anything")
	}
	if v := nearcopy.Compare(a, b); v.Copy {
		t.Errorf("different stories are copies: %+v", v)
	}
}
