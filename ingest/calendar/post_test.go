package calendar

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

func postDocument(t *testing.T, p platform.Post) Result {
	t.Helper()
	doc, err := platform.NewDocument(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Extract(doc, Options{Now: crawlNow})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return res
}

func TestAPostIsAnEventOnlyWhenItsTextNamesADateAndATime(t *testing.T) {
	published := time.Date(2024, 10, 8, 9, 0, 0, 0, time.UTC) // a Tuesday
	cases := []struct {
		name, text string
		want       string // the start in RFC 3339; "" for no event
	}{
		{"a date and a time in one phrase", "Join us for the launch party on October 19 at 7pm at the Loft!", "2024-10-19T19:00:00Z"},
		{"a weekday, a date and a 24-hour time", "Party! Sat 19 Oct 19:30 @ the Loft", "2024-10-19T19:30:00Z"},
		{"a relative day with a time, from the post's date", "Concert tomorrow at 8 pm, bring friends", "2024-10-09T20:00:00Z"},
		{"a date, then the time further on", "See you Saturday, 19 October, doors 19:30", "2024-10-19T19:30:00Z"},
		{"another language", "Wir spielen am 19. Oktober 2024 um 20:00 im Club", "2024-10-19T20:00:00Z"},
		{"a date without a time", "Our shop is closed on 19 October.", ""},
		{"a time without a date", "Doors open at 19:30 as usual", ""},
		{"the post's own day, which reads like a bare time", "Tonight at 8pm: live jazz", ""},
		{"no date at all", "What a great day at the beach", ""},
		{"an empty text", "", ""},
		{"a date long past", "Remember 19 October 1998 at 8pm? We do.", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := postDocument(t, platform.Post{
				Platform: domain.SourceInstagram, ID: "1801", Code: "C0aaa", Subtype: "post", URL: "https://www.instagram.com/p/C0aaa/",
				Text: tc.text, PublishedAt: published, ImageURL: "https://cdn.example/p.jpg",
				Account: platform.Account{ID: "178", Username: "theloft", Name: "The Loft"},
			})
			if tc.want == "" {
				if len(res.Happenings) != 0 {
					t.Fatalf("found %d events, want none: %+v", len(res.Happenings), res.Happenings[0].Instances)
				}
				return
			}
			if len(res.Happenings) != 1 {
				t.Fatalf("found %d events, want one", len(res.Happenings))
			}
			e := res.Happenings[0]
			if got := e.Instances[0].Occurrences[0].Start.Format(time.RFC3339); got != tc.want {
				t.Errorf("starts %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAPostEventCarriesThePostsTextImageOrganizerAndBlock(t *testing.T) {
	published := time.Date(2024, 10, 8, 9, 0, 0, 0, time.UTC)
	p := platform.Post{
		Platform: domain.SourceTwitter, ID: "1001", Subtype: "entry", URL: "https://x.com/theloft/status/1001",
		Text: "Live & loud: Sat 19 Oct 19:30\nTickets at the door", PublishedAt: published,
		MediaURL: "https://pbs.twimg.com/media/x.jpg", ImageURL: "https://pbs.twimg.com/media/x.jpg",
		Account: platform.Account{ID: "42", Username: "TheLoft", Name: "The Loft"},
	}
	res := postDocument(t, p)
	if len(res.Happenings) != 1 {
		t.Fatalf("%d events", len(res.Happenings))
	}
	e := res.Happenings[0]
	want := map[string]any{
		"identity": "url:https://x.com/theloft/status/1001", "title": "Live &amp; loud: Sat 19 Oct 19:30",
		"description": "Live &amp; loud: Sat 19 Oct 19:30<br>Tickets at the door", "primaryUrl": "https://x.com/theloft/status/1001",
		"primaryImage": "https://pbs.twimg.com/media/x.jpg", "timezone": "UTC", "pattern": "singular",
		"organizer": `{"name":"The Loft","url":"https://x.com/TheLoft"}`,
		"source":    jsonString(p.Block()),
	}
	got := map[string]any{
		"identity": e.Identity, "title": e.Title, "description": e.Description, "primaryUrl": e.PrimaryURL,
		"primaryImage": e.PrimaryImage, "timezone": e.Time.Timezone, "pattern": e.Time.TemporalPattern,
		"organizer": jsonString(e.Organizer), "source": jsonString(e.Source),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if e.PublishedAt == nil || !e.PublishedAt.Equal(published) {
		t.Errorf("publishedAt %v, want the post's", e.PublishedAt)
	}
}

func TestAFacebookPageEventIsReadAsThePlatformStatesIt(t *testing.T) {
	lat, lng := 52.5200, 13.4050
	updated := time.Date(2024, 10, 1, 8, 0, 0, 0, time.UTC)
	p := platform.Post{
		Platform: domain.SourceFacebook, ID: "2001", Subtype: "event", URL: "https://www.facebook.com/events/2001/",
		Title: "Jazz Night", Text: "An evening of jazz.\nBring friends.", PublishedAt: updated,
		MediaURL: "https://scontent.xx.fbcdn.net/cover.jpg", ImageURL: "https://scontent.xx.fbcdn.net/cover.jpg",
		Account: platform.Account{ID: "100", Username: "jazzclub", Name: "Jazz Club Berlin", Kind: "page"},
		Event: &platform.Happening{
			Start: time.Date(2024, 10, 25, 17, 0, 0, 0, time.UTC), End: time.Date(2024, 10, 25, 21, 0, 0, 0, time.UTC),
			Timezone: "Europe/Berlin", TicketURL: "https://tickets.example/jazz", UpdatedAt: updated,
			Place: &platform.Place{Name: "A-Trane", Street: "Bleibtreustraße 1", PostalCode: "10623", City: "Berlin", Country: "Germany", Lat: &lat, Lng: &lng},
		},
	}
	res := postDocument(t, p)
	if len(res.Happenings) != 1 {
		t.Fatalf("%d events", len(res.Happenings))
	}
	e := res.Happenings[0]
	occ := e.Instances[0].Occurrences[0]
	if !occ.Start.Equal(p.Event.Start) || occ.End == nil || !occ.End.Equal(p.Event.End) {
		t.Errorf("occurrence %v – %v, want 19:00–23:00 Berlin time", occ.Start, occ.End)
	}
	if e.Instances[0].Status != domain.StatusScheduled || e.Time.Timezone != "Europe/Berlin" {
		t.Errorf("status %s zone %s", e.Instances[0].Status, e.Time.Timezone)
	}
	if e.Time.DisplayText != "Fri 25 Oct 2024, 19:00–23:00 (Europe/Berlin)" {
		t.Errorf("displayText %q", e.Time.DisplayText)
	}
	wantLocation := `{"venue":{"name":"A-Trane","address":"Bleibtreustraße 1, 10623 Berlin"},"coordinates":{"lat":52.52,"lng":13.405},` +
		`"displayAddress":"A-Trane, Bleibtreustraße 1, 10623 Berlin, Germany","locality":"Berlin","region":"State of Berlin","country":"Germany"}`
	if got := jsonString(e.Location); got != wantLocation {
		t.Errorf("location %s\nwant %s", got, wantLocation)
	}
	if e.Title != "Jazz Night" || e.Description != "An evening of jazz.<br>Bring friends." || e.PrimaryImage != p.ImageURL {
		t.Errorf("title %q description %q image %q", e.Title, e.Description, e.PrimaryImage)
	}
	if jsonString(e.URLs) != `["https://www.facebook.com/events/2001/","https://tickets.example/jazz"]` {
		t.Errorf("urls %v", e.URLs)
	}
	if e.Source.Type != "facebook" || e.Source.Subtype != "event" || e.Source.Publisher == nil || e.Source.Publisher.Type != "page" {
		t.Errorf("source block %s", jsonString(e.Source))
	}
	if e.ModifiedAt == nil || !e.ModifiedAt.Equal(updated) {
		t.Errorf("modifiedAt %v", e.ModifiedAt)
	}

	t.Run("a cancelled event is cancelled", func(t *testing.T) {
		c := p
		ev := *p.Event
		ev.Cancelled = true
		c.Event = &ev
		if st := postDocument(t, c).Happenings[0].Instances[0].Status; st != domain.StatusCancelled {
			t.Errorf("status %s", st)
		}
	})
	t.Run("an online event without a place is held at its page", func(t *testing.T) {
		c := p
		ev := *p.Event
		ev.Online, ev.Place, ev.Timezone = true, nil, ""
		c.Event = &ev
		loc := postDocument(t, c).Happenings[0].Location
		if loc == nil || loc.Online == nil || loc.Online.URL != p.URL || loc.Online.Platform != "Facebook" {
			t.Errorf("location %s", jsonString(loc))
		}
	})
	t.Run("a zone is found from the coordinates when none is stated", func(t *testing.T) {
		c := p
		ev := *p.Event
		ev.Timezone = ""
		c.Event = &ev
		if z := postDocument(t, c).Happenings[0].Time.Timezone; z != "Europe/Berlin" {
			t.Errorf("zone %s", z)
		}
	})
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// benchTexts are captions of typical length: one naming a date and a
// time; one naming neither but with digits, so the parser reads it; one
// without digits, which the parser is spared.
var benchTexts = map[string]string{
	"dated": "Our next open workshop is on Saturday, 19 October at 14:00 in the library hall! Bring a laptop and your questions. " +
		"Free entry, registration at the link in bio. #community #workshop",
	"digits": "Thank you to the 25 of you who came out to the workshop! The photos are up on our site and the recording follows next week. " +
		"Special thanks to our volunteers and to the library for hosting us. #community #workshop2024",
	"words": "Thank you to everyone who came out to the workshop! The photos are up on our site and the recording follows next week. " +
		"Special thanks to our volunteers and to the library for hosting us. #community #workshop #thanks",
}

func benchPost(text string) platform.Post {
	return platform.Post{
		Platform: domain.SourceInstagram, ID: "1801", Code: "C0aaa", Subtype: "post", URL: "https://www.instagram.com/p/C0aaa/",
		Text: text, PublishedAt: time.Date(2024, 10, 8, 9, 0, 0, 0, time.UTC),
		Account: platform.Account{ID: "178", Username: "theloft", Name: "The Loft"},
	}
}

func benchmarkPost(b *testing.B, kind string) {
	doc, err := platform.NewDocument(benchPost(benchTexts[kind]))
	if err != nil {
		b.Fatal(err)
	}
	want := map[string]int{"dated": 1}[kind]
	if res, err := Extract(doc, Options{Now: crawlNow}); err != nil || len(res.Happenings) != want {
		b.Fatalf("%d events, %v", len(res.Happenings), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(doc, Options{Now: crawlNow}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPostWithADateAndTime(b *testing.B)    { benchmarkPost(b, "dated") }
func BenchmarkPostWithDigitsButNoDate(b *testing.B) { benchmarkPost(b, "digits") }
func BenchmarkPostWithoutDigits(b *testing.B)       { benchmarkPost(b, "words") }
