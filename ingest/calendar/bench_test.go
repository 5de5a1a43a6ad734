package calendar

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
)

// eventPage builds a page shaped like a WordPress event page (about 60
// KB): a head full of meta tags, styles and scripts, The Events
// Calendar's JSON-LD plus a Yoast @graph, and a body with navigation, the
// event, a list of upcoming events and a footer.
func eventPage() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="de-DE"><head><meta charset="UTF-8">
<title>Jazz Night – Live im Keller – Jazzkeller Berlin</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="https://jazzkeller.example/event/jazz-night/">
<link rel="alternate" type="text/calendar" title="iCal Feed" href="https://jazzkeller.example/events/?ical=1">
`)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "<meta name=\"tracking-%d\" content=\"value-%d-abcdefghijklmnop\">\n<link rel=\"preload\" as=\"font\" href=\"/fonts/font-%d.woff2\" crossorigin>\n", i, i, i)
	}
	b.WriteString("<style>")
	for i := 0; i < 160; i++ {
		fmt.Fprintf(&b, ".tribe-c%d{margin:0 auto;padding:%dpx;color:#333;font:16px/1.5 Georgia,serif}\n", i, i%16)
	}
	b.WriteString("</style>\n<script>")
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&b, "window.dataLayer=window.dataLayer||[];dataLayer.push({event:'e%d',value:%d});\n", i, i)
	}
	b.WriteString(`</script>
<script type="application/ld+json" class="yoast-schema-graph">{"@context":"https://schema.org","@graph":[{"@type":"WebPage","@id":"https://jazzkeller.example/event/jazz-night/","url":"https://jazzkeller.example/event/jazz-night/","name":"Jazz Night","isPartOf":{"@id":"https://jazzkeller.example/#website"}},{"@type":"WebSite","@id":"https://jazzkeller.example/#website","url":"https://jazzkeller.example/","name":"Jazzkeller Berlin"},{"@type":"Organization","@id":"https://jazzkeller.example/#org","name":"Jazzkeller Berlin","logo":{"@type":"ImageObject","url":"https://jazzkeller.example/logo.png"}}]}</script>
<script type="application/ld+json">[{"@context":"http://schema.org","@type":"Event","name":"Jazz Night &#8211; Live im Keller","description":"&lt;p&gt;Swing &amp;amp; Bebop mit dem Trio Blau.&lt;\/p&gt;\n","image":"https:\/\/jazzkeller.example\/wp-content\/uploads\/2024\/10\/trio-blau.jpg","url":"https:\/\/jazzkeller.example\/event\/jazz-night\/","eventAttendanceMode":"https:\/\/schema.org\/OfflineEventAttendanceMode","eventStatus":"https:\/\/schema.org\/EventScheduled","startDate":"2024-11-12T20:00:00+01:00","endDate":"2024-11-12T23:00:00+01:00","location":{"@type":"Place","name":"Jazzkeller","address":{"@type":"PostalAddress","streetAddress":"Hauptstra\u00dfe 12","addressLocality":"Berlin","postalCode":"10115","addressCountry":"Deutschland"}},"organizer":{"@type":"Person","name":"Berliner Jazzfreunde e.V.","url":"https:\/\/jazzfreunde.example\/","email":"info@jazzfreunde.example"},"offers":{"@type":"Offer","price":"0","priceCurrency":"EUR","url":"https:\/\/jazzkeller.example\/event\/jazz-night\/","availability":"inStock"}}]</script>
</head><body class="tribe-events-page-template"><header><nav><ul>
`)
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&b, "<li class=\"menu-item\"><a href=\"/programm/kategorie-%d/\">Kategorie %d</a></li>\n", i, i)
	}
	b.WriteString(`</ul></nav></header><main><div class="tribe-events-single"><h1>Jazz Night &#8211; Live im Keller</h1>
<a class="tribe-events-ical" href="https://jazzkeller.example/event/jazz-night/?ical=1">iCal exportieren</a>
`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "<p>Absatz %d. Das Trio Blau spielt Standards und eigene Stücke, dazwischen gibt es eine offene Session, zu der "+
			"<a href=\"/musiker/%d\">Gäste</a> ihre Instrumente mitbringen dürfen. Einlass ab 19 Uhr, die Bar ist geöffnet.</p>\n", i, i)
	}
	b.WriteString("</div><aside><h2>Demnächst</h2><ul>\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/event/konzert-nummer-%d/\"><img src=\"/thumbs/%d.jpg\" width=\"120\" height=\"80\" loading=\"lazy\" alt=\"\">"+
			"<span>Konzert Nummer %d</span> <time datetime=\"2024-12-%02dT20:00\">%d.12.</time></a></li>\n", i, i, i, i%28+1, i%28+1)
	}
	b.WriteString("</ul></aside></main><footer><ul>\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/info/seite-%d\">Seite %d</a></li>\n", i, i)
	}
	b.WriteString("</ul><p>&copy; 2024 Jazzkeller Berlin</p></footer></body></html>\n")
	return []byte(b.String())
}

// bigCalendar builds a 500-VEVENT calendar as a venue's export: 450
// one-off events in Europe/Berlin, 40 weekly series, 10 overrides of
// them.
func bigCalendar() []byte {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Venue//Export//EN\r\nX-WR-TIMEZONE:Europe/Berlin\r\n" +
		"BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nDTSTART:19700329T020000\r\n" +
		"RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\n" +
		"DTSTART:19701025T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n")
	start := time.Date(2024, 10, 1, 19, 0, 0, 0, time.UTC)
	for i := 0; i < 450; i++ {
		day := start.AddDate(0, 0, i%200)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:one-%d@venue.example\r\nDTSTAMP:20241001T000000Z\r\nDTSTART;TZID=Europe/Berlin:%s\r\nDTEND;TZID=Europe/Berlin:%s\r\n"+
			"SUMMARY:Konzert Nummer %d\r\nDESCRIPTION:Ein Abend mit Musik\\, Gästen und einer offenen Session.\\nEinlass ab 19 Uhr.\r\n"+
			"LOCATION:Jazzkeller\\, Hauptstraße 12\\, 10115 Berlin\\, Germany\r\nURL:https://venue.example/event/%d/\r\nEND:VEVENT\r\n",
			i, day.Format("20060102T150405"), day.Add(3*time.Hour).Format("20060102T150405"), i, i)
	}
	for i := 0; i < 40; i++ {
		day := start.AddDate(0, 0, i%7)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:series-%d@venue.example\r\nDTSTAMP:20241001T000000Z\r\nDTSTART;TZID=Europe/Berlin:%s\r\nDURATION:PT2H\r\n"+
			"RRULE:FREQ=WEEKLY;UNTIL=20250331T000000Z\r\nEXDATE;TZID=Europe/Berlin:%s\r\nSUMMARY:Reihe %d\r\nLOCATION:Jazzkeller\\, Berlin\r\nEND:VEVENT\r\n",
			i, day.Format("20060102T150405"), day.AddDate(0, 0, 14).Format("20060102T150405"), i)
	}
	for i := 0; i < 10; i++ {
		orig := start.AddDate(0, 0, i%7+21)
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:series-%d@venue.example\r\nDTSTAMP:20241001T000000Z\r\nRECURRENCE-ID;TZID=Europe/Berlin:%s\r\n"+
			"DTSTART;TZID=Europe/Berlin:%s\r\nDURATION:PT2H\r\nSUMMARY:Reihe %d (verlegt)\r\nEND:VEVENT\r\n",
			i, orig.Format("20060102T150405"), orig.Add(time.Hour).Format("20060102T150405"), i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return []byte(b.String())
}

func TestTheBenchmarkDocumentsAreRealistic(t *testing.T) {
	page := eventPage()
	if n := len(page); n < 55_000 || n > 70_000 {
		t.Errorf("event page is %d bytes, want about 60 KB", n)
	}
	res, err := Extract(htmlDoc("https://jazzkeller.example/event/jazz-night/", string(page)), Options{Now: crawlNow})
	if err != nil || len(res.Happenings) != 1 || res.Happenings[0].Title != "Jazz Night – Live im Keller" {
		t.Errorf("event page: %v %+v", err, res)
	}
	cal, err := Extract(document.Document{URL: "https://venue.example/events.ics", ContentType: "text/calendar", Body: bigCalendar()}, Options{Now: crawlNow})
	if err != nil || len(cal.Happenings) != 490 || cal.Dropped != 0 {
		t.Errorf("calendar: %v, %d events, %d dropped; want 490 (40 series with their 10 overrides)", err, len(cal.Happenings), cal.Dropped)
	}
}

// BenchmarkEventPage measures single-core extraction of a ~60 KB event
// page. Run: go test ./extract/events -run '^$' -bench EventPage -cpu 1
func BenchmarkEventPage(b *testing.B) {
	page := eventPage()
	d := document.Document{URL: "https://jazzkeller.example/event/jazz-night/", ContentType: "text/html; charset=UTF-8", Body: page}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(d, Options{Now: crawlNow}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkCalendar500 measures single-core extraction of a 500-VEVENT
// .ics file. Run: go test ./extract/events -run '^$' -bench Calendar500 -cpu 1
func BenchmarkCalendar500(b *testing.B) {
	body := bigCalendar()
	d := document.Document{URL: "https://venue.example/events.ics", ContentType: "text/calendar", Body: body}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(d, Options{Now: crawlNow}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
	b.ReportMetric(500*float64(b.N)/b.Elapsed().Seconds(), "vevents/s")
}
