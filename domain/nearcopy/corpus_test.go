package nearcopy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// corpusPage is one page of testdata/articles: a header (story, url,
// title), a blank line, the body text as a reader of the page sees it.
type corpusPage struct {
	name, story string
	page        nearcopy.Page
}

func readArticles(t testing.TB) []corpusPage {
	t.Helper()
	files, err := filepath.Glob("testdata/articles/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []corpusPage
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head, body, _ := strings.Cut(string(b), "\n\n")
		p := corpusPage{name: filepath.Base(f)}
		for line := range strings.Lines(head) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
			switch k {
			case "story":
				p.story = v
			case "url":
				p.page.URL = v
			case "title":
				p.page.Title = v
			}
		}
		if p.story == "" || p.page.URL == "" || p.page.Title == "" {
			t.Fatalf("%s: header needs story, url and title", f)
		}
		p.page.Signature = nearcopy.Sign(p.page.Title, body)
		out = append(out, p)
	}
	return out
}

// score counts a decision on a pair against what the corpus says.
type score struct{ tp, fp, fn, tn int }

func (s *score) add(want, got bool) {
	switch {
	case want && got:
		s.tp++
	case !want && got:
		s.fp++
	case want && !got:
		s.fn++
	default:
		s.tn++
	}
}

func (s score) precision() float64 {
	if s.tp+s.fp == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fp)
}

func (s score) recall() float64 {
	if s.tp+s.fn == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fn)
}

func (s score) String() string {
	return fmt.Sprintf("pairs %d (copies %d): precision %.3f, recall %.3f (tp %d, fp %d, fn %d, tn %d)",
		s.tp+s.fp+s.fn+s.tn, s.tp+s.fn, s.precision(), s.recall(), s.tp, s.fp, s.fn, s.tn)
}

// Every pair of the corpus is compared both ways; pages of one story are
// copies, pages of two stories are not.
func TestTheArticleCorpusIsSortedWithPrecisionAtLeast099(t *testing.T) {
	pages := readArticles(t)
	var s score
	for i, a := range pages {
		for _, b := range pages[i+1:] {
			want := a.story == b.story
			ab, ba := nearcopy.Compare(a.page, b.page), nearcopy.Compare(b.page, a.page)
			if ab.Copy != ba.Copy {
				t.Errorf("%s and %s: the verdict depends on the order (%v, %v)", a.name, b.name, ab, ba)
			}
			if ab.Copy != want {
				t.Logf("%s ~ %s: want copy %v, got %+v (title overlap %.2f)", a.name, b.name, want, ab, nearcopy.TitleOverlap(a.page.Title, b.page.Title))
			}
			s.add(want, ab.Copy)
		}
	}
	t.Logf("articles: %d pages, %v", len(pages), s)
	if s.precision() < 0.99 {
		t.Errorf("precision %.3f is below 0.99", s.precision())
	}
	if s.recall() < 0.9 {
		t.Errorf("recall %.3f is below 0.9", s.recall())
	}
}

type corpusListing struct {
	Happening string    `json:"happening"`
	Source    string    `json:"source"`
	Title     string    `json:"title"`
	Start     time.Time `json:"start"`
	Venue     string    `json:"venue"`
	Address   string    `json:"address"`
	Lat       *float64  `json:"lat"`
	Lon       *float64  `json:"lon"`
}

func (c corpusListing) listing() nearcopy.Listing {
	l := nearcopy.Listing{Title: c.Title, Start: c.Start, Venue: c.Venue, Address: c.Address}
	if c.Lat != nil && c.Lon != nil {
		l.HasGeo, l.Lat, l.Lon = true, *c.Lat, *c.Lon
	}
	return l
}

func TestTheHappeningCorpusIsSortedWithPrecisionAtLeast099(t *testing.T) {
	b, err := os.ReadFile("testdata/happenings.json")
	if err != nil {
		t.Fatal(err)
	}
	var listings []corpusListing
	if err := json.Unmarshal(b, &listings); err != nil {
		t.Fatal(err)
	}
	var s score
	for i, a := range listings {
		for _, b := range listings[i+1:] {
			want := a.Happening == b.Happening
			got := nearcopy.SameHappening(a.listing(), b.listing())
			if got != nearcopy.SameHappening(b.listing(), a.listing()) {
				t.Errorf("%s/%s and %s/%s: the verdict depends on the order", a.Happening, a.Source, b.Happening, b.Source)
			}
			if got != want {
				t.Logf("%s/%s ~ %s/%s: want %v, got %v", a.Happening, a.Source, b.Happening, b.Source, want, got)
			}
			s.add(want, got)
		}
	}
	t.Logf("happenings: %d listings, %v", len(listings), s)
	if s.precision() < 0.99 {
		t.Errorf("precision %.3f is below 0.99", s.precision())
	}
	if s.recall() < 0.9 {
		t.Errorf("recall %.3f is below 0.9", s.recall())
	}
}

// Pages whose normal address was computed once (Page.Normalized) compare
// as the same pages without it, on every pair of the corpus both ways,
// and across the forms of one address (www., AMP, tracking, http).
func TestNormalizedPagesCompareAsThePagesThemselves(t *testing.T) {
	pages := readArticles(t)
	first := pages[0].page
	for _, u := range []string{"http://www." + strings.TrimPrefix(first.URL, "https://") + "?utm_source=x", first.URL + "/amp", ""} {
		p := first
		p.URL = u
		pages = append(pages, corpusPage{name: "variant " + u, page: p})
	}
	for _, a := range pages {
		for _, b := range pages {
			want := nearcopy.Compare(a.page, b.page)
			for _, got := range []nearcopy.Verdict{
				nearcopy.Compare(a.page.Normalized(), b.page.Normalized()),
				nearcopy.Compare(a.page.Normalized(), b.page),
				nearcopy.Compare(a.page, b.page.Normalized()),
			} {
				if got != want {
					t.Fatalf("%s against %s: %+v normalized, %+v without", a.name, b.name, got, want)
				}
			}
		}
	}
}
