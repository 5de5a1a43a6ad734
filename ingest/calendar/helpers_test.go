package calendar

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// crawlNow is the clock of every test crawl: Thursday 10 October 2024,
// three weeks before the end of summer time in Europe.
var crawlNow = time.Date(2024, 10, 10, 12, 0, 0, 0, time.UTC)

// fixture is one test document, served at url with its content type as a
// real site would serve it.
func fixture(t testing.TB, name, url string) document.Document {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	ct := "text/html; charset=UTF-8"
	if strings.HasSuffix(name, ".ics") {
		ct = "text/calendar; charset=utf-8"
	}
	return document.Document{URL: url, ContentType: ct, Body: body}
}

func extractFixture(t testing.TB, name, url string) Result {
	t.Helper()
	res, err := Extract(fixture(t, name, url), Options{Now: crawlNow})
	if err != nil {
		t.Fatalf("Extract(%s): %v", name, err)
	}
	return res
}

// byTitle finds an extracted event by its title.
func byTitle(t testing.TB, res Result, title string) domain.HappeningDetails {
	t.Helper()
	for _, e := range res.Happenings {
		if e.Title == title {
			return e
		}
	}
	var titles []string
	for _, e := range res.Happenings {
		titles = append(titles, e.Title)
	}
	t.Fatalf("no event titled %q among %q", title, titles)
	return domain.HappeningDetails{}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// equal compares what an extraction gave with what a test wants; times
// are all UTC, so deep equality is instant equality.
func equal(got, want any) bool { return reflect.DeepEqual(got, want) }

func ptr[T any](v T) *T { return &v }

func htmlDoc(url, body string) document.Document {
	return document.Document{URL: url, ContentType: "text/html; charset=utf-8", Body: []byte(body)}
}

// check is one field of an extraction against what a test wants.
type check struct {
	name      string
	got, want any
}

func checkAll(t *testing.T, checks []check) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !equal(c.got, c.want) {
				t.Errorf("got %#v, want %#v", c.got, c.want)
			}
		})
	}
}
