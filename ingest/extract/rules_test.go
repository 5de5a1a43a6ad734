package extract

import (
	"fmt"
	"testing"
	"time"
)

func TestATitleIsChosenByItsAgreementWithTheTitleTag(t *testing.T) {
	tests := []struct {
		name       string
		titleTag   string
		siteNames  []string
		candidates []string
		want       string
	}{
		{"the candidate equal to <title> without the site name wins over a summary",
			"Lake Varnholm - Wikipedia", nil, []string{"lake in the uplands", "Lake Varnholm", "Lake Varnholm - Wikipedia"}, "Lake Varnholm"},
		{"a copy of <title> beats a text that shares none of its words, and loses the declared site name",
			"Storm hits coast | Example News", []string{"Example News"}, []string{"Our live coverage", "Storm hits coast | Example News"}, "Storm hits coast"},
		{"a rewritten title sharing most words beats an unrelated one",
			"Storm batters coast, thousands flee | Example News", nil, []string{"Live: latest updates", "Storm batters the coast as thousands flee"}, "Storm batters the coast as thousands flee"},
		{"among equally agreeing candidates the most trusted wins",
			"Ignored title | Example", nil, []string{"Storm & flood hit the coast", "OG title"}, "Storm & flood hit the coast"},
		{"a candidate that is the site's name is never chosen",
			"Budget passes after long night | Example News", nil, []string{"Example News", "Budget passes"}, "Budget passes"},
		{"a long suffix is part of the title, not the site's name",
			"Brexit - what happens next week in Parliament", nil, []string{"Brexit - what happens next week in Parliament"}, "Brexit - what happens next week in Parliament"},
		{"a short last part the page does not declare as its site's name stays in the title",
			"Review: The Bear - season 3", nil, []string{"Review: The Bear - season 3"}, "Review: The Bear - season 3"},
		{"without a <title> the most trusted candidate wins",
			"", nil, []string{"Headline", "Name"}, "Headline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newTitleTag(tt.titleTag, tt.siteNames).choose(tt.candidates); got != tt.want {
				t.Errorf("choose = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTheSiteNameInAPageTitle(t *testing.T) {
	tests := []struct {
		name string
		html string
		want string
	}{
		{"a short last part shown as the logo h1 is cut",
			`<title>Budget passes after long night | City Times</title><body><h1>City Times</h1><h2>Budget passes after long night, at last</h2>`,
			"Budget passes after long night"},
		{"a short last part the page never shows as its name is kept",
			`<title>Review: The Bear - season 3</title><body><h1>Reviews</h1>`,
			"Review: The Bear - season 3"},
		{"a page whose only title is its site's name keeps it",
			`<meta property="og:site_name" content="City Times"><meta property="og:title" content="City Times">`,
			"City Times"},
		{"an h1 that <title> contains is the title",
			`<title>Review: The Bear - season 3</title><body><h1>Review: The Bear</h1>`,
			"Review: The Bear"},
		{"an h1 equal to the part after | is the site's name, however long",
			`<title>Upgrading your install | Acme Widgets user manual</title><body><h1>Acme Widgets user manual</h1>`,
			"Upgrading your install"},
		{"after -", `<title>Upgrading your install - Acme Widgets manual</title><body><h1>Acme Widgets manual</h1>`, "Upgrading your install"},
		{"after –", `<title>Upgrading your install – Acme Widgets manual</title><body><h1>Acme Widgets manual</h1>`, "Upgrading your install"},
		{"after —", `<title>Upgrading — Acme Widgets manual</title><body><h1>Acme Widgets manual</h1>`, "Upgrading"},
		{"after ·", `<title>Upgrading your install · Acme Widgets manual</title><body><h1>Acme Widgets manual</h1>`, "Upgrading your install"},
		{"after »", `<title>Upgrading your install » Acme Widgets manual</title><body><h1>Acme Widgets manual</h1>`, "Upgrading your install"},
		{"after a colon, when the h1 is the banner's",
			`<title>Moving your data: Acme Widgets manual</title><body><header><h1><a href="/" rel="home">Acme Widgets manual</a></h1></header>`,
			"Moving your data"},
		{"after a colon, an h1 that is the page's own heading stays the title",
			`<title>Review: The Bear</title><body><main><h1>The Bear</h1></main>`,
			"The Bear"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArticle(htmlPage("https://news.example.com/a/story", []byte(tt.html)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != tt.want {
				t.Errorf("Title = %q, want %q", got.Title, tt.want)
			}
		})
	}
}

func TestALeadIsJudgedBySentenceShape(t *testing.T) {
	tests := []struct {
		name string
		text string
		want bool
	}{
		{"a short complete sentence is a lead", "The council approved the budget.", true},
		{"a sentence ending in a closing quote is a lead", `The mayor said: "We will rebuild."`, true},
		{"two words are a label, not a lead", "Too short.", false},
		{"a byline without a full stop is not a lead", "By Jane Doe, Political editor", false},
		{"a sentence starting in lower case is a fragment", "and then the council approved the budget.", false},
		{"a colon ending introduces a list", "Here is what we know so far:", false},
		{"long prose counts even typed in lower case without a full stop",
			"has anyone else seen the battery drain after the update, mine goes from full to half overnight", true},
		{"Japanese prose without spaces is a lead", "市議会は火曜日、新しい図書館の建設計画を承認した。", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sentenceShaped(tt.text); got != tt.want {
				t.Errorf("sentenceShaped(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestADeclaredTimeZoneIsReadAsANameOrAnOffset(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantOffset int // at 2024-07-01 12:00 UTC
		wantNil    bool
	}{
		{"an IANA name is that zone", "Europe/Berlin", 2 * 3600, false},
		{"an offset with a colon", "+05:30", 5*3600 + 1800, false},
		{"an offset without a colon", "-0300", -3 * 3600, false},
		{"a UTC-prefixed hour offset", "UTC+2", 2 * 3600, false},
		{"GMT alone is UTC", "GMT", 0, false},
		{"a made-up name is no zone", "Mars/Olympus", 0, true},
		{"an offset beyond 14 hours is no zone", "+15:00", 0, true},
		{"a path escaping the zone database is no zone", "../../etc/passwd", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := parseZone(tt.in)
			if (loc == nil) != tt.wantNil {
				t.Fatalf("parseZone(%q) = %v, want nil %v", tt.in, loc, tt.wantNil)
			}
			if loc == nil {
				return
			}
			if _, off := time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC).In(loc).Zone(); off != tt.wantOffset {
				t.Errorf("offset = %d, want %d", off, tt.wantOffset)
			}
		})
	}
}

func TestTextBesideTheArticleIsNotItsLead(t *testing.T) {
	const lead = "The council approved the budget after a long night."
	tests := []struct {
		name string
		body string
		want string
	}{
		{"a caption paragraph is passed over",
			`<article><p class="wp-caption-text">Councillors voted at two in the morning.</p><p>` + lead + `</p></article>`, lead},
		{"a container whose class only mentions captions is read",
			`<article><div class="body has-captions"><p>` + lead + `</p></div></article>`, lead},
		{"a note for readers is passed over",
			`<main><div role="note">For the earlier vote, see the March report.</div><div>` + lead + `</div></main>`, lead},
		{"a paragraph hidden by a spaced, upper-case style is passed over",
			`<article><p style="DISPLAY : none">Subscribe to read the whole story today.</p><p>` + lead + `</p></article>`, lead},
		{"text hidden from screen readers inside the lead is left out",
			`<article><p><span aria-hidden="true">★</span>` + lead + `</p></article>`, lead},
		{"a paragraph made mostly of links is not a lead",
			`<article><p><a href="/a">Read our full coverage of the city budget</a> and more.</p><p>` + lead + `</p></article>`, lead},
		{"an article inside an aside is a related story, not the page's",
			`<aside><article><p>Another story that the page links to at the side.</p></article></aside><main><p>` + lead + `</p></main>`, lead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html := `<html><head><title>Budget</title></head><body>` + tt.body + `</body></html>`
			got, err := ParseArticle(htmlPage("https://news.example.com/a/budget", []byte(html)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Description != tt.want {
				t.Errorf("Description = %q, want %q", got.Description, tt.want)
			}
		})
	}
}

func TestALeadThatStartsMidSentenceIsPassedOver(t *testing.T) {
	const lead = "The council approved the budget after a long night of debate in the town hall."
	tests := []struct {
		name string
		body string
		want string
	}{
		{"a text after a display formula, beginning with a lower-case connective",
			`<article><div><math display="block"><mi>x</mi></math></div><p>where the first term is the cost of the new depot and the second the cost of the park.</p><p>` + lead + `</p></article>`, lead},
		{"a text beginning in lower case with a hole where an inline image stood",
			`<article><p><img src="/f.png" width="40" height="12" alt="x"> gives the share of the budget spent on roads in each of the last five years.</p><p>` + lead + `</p></article>`, lead},
		{"a text beginning in lower case with a hole where inline math stood",
			`<article><p>each <math><mi>n</mi></math> counts the votes cast for the plan in one of the ward meetings held last month.</p><p>` + lead + `</p></article>`, lead},
		{"a long text typed in lower case without holes is still prose",
			`<article><p>has anyone else seen the battery drain after the update, mine goes from full to half overnight</p></article>`,
			"has anyone else seen the battery drain after the update, mine goes from full to half overnight"},
		{"a sentence with inline math that starts like one is a lead",
			`<article><p>The ratio <math><mi>r</mi></math> fell below one for the first time since the council began to publish it.</p></article>`,
			"The ratio fell below one for the first time since the council began to publish it."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html := `<html><head><title>Budget</title></head><body>` + tt.body + `</body></html>`
			got, err := ParseArticle(htmlPage("https://news.example.com/a/budget", []byte(html)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Description != tt.want {
				t.Errorf("Description = %q, want %q", got.Description, tt.want)
			}
		})
	}
}

func TestAPageListingSeveralArticlesIsNotDescribedByTheFirstOne(t *testing.T) {
	story := func(n int) string {
		return fmt.Sprintf(`<article><h2><a href="/s/%d">Story %d</a></h2><p>The body of story %d begins with a sentence long enough to be a lead.</p></article>`, n, n, n)
	}
	tests := []struct {
		name string
		body string
		want string
	}{
		{"the page's own lead before its stories",
			`<main><p>Our pick of the week's news from the harbour and the town.</p>` + story(1) + story(2) + `</main>`,
			"Our pick of the week's news from the harbour and the town."},
		{"the page's own lead after its stories",
			`<main>` + story(1) + story(2) + story(3) + `<p>Our pick of the week's news from the harbour and the town.</p></main>`,
			"Our pick of the week's news from the harbour and the town."},
		{"no lead of its own is no description",
			`<main>` + story(1) + story(2) + `</main>`, ""},
		{"one article with comments (articles without headings) is described by the article",
			`<main><article><h1>Budget</h1><p>The council approved the budget after a long night.</p></article>` +
				`<article class="comment"><p>Great news for the town, finally a decision that makes sense.</p></article>` +
				`<article class="comment"><p>I would like to know what happens to the depot plan now.</p></article></main>`,
			"The council approved the budget after a long night."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html := `<html><head><title>This week</title></head><body>` + tt.body + `</body></html>`
			got, err := ParseArticle(htmlPage("https://news.example.com/edition/24", []byte(html)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Description != tt.want {
				t.Errorf("Description = %q, want %q", got.Description, tt.want)
			}
		})
	}
}

func TestMachineReadableDatesWinOverVisibleOnes(t *testing.T) {
	tests := []struct {
		name string
		html string
		want time.Time
	}{
		{"article:published_time beats a <time> marked datePublished that disagrees",
			`<meta property="article:published_time" content="2024-09-03T06:00:00Z"><title>T</title><body><h1>T</h1><time itemprop="datePublished" datetime="2024-09-04T08:12:09+01:00">4 Sep</time>`,
			time.Date(2024, 9, 3, 6, 0, 0, 0, time.UTC)},
		{"also when the <time> has no zone",
			`<meta property="article:published_time" content="2024-09-03T06:00:00Z"><title>T</title><body><h1>T</h1><time itemprop="datePublished" datetime="2024-09-04T08:12">4 Sep</time>`,
			time.Date(2024, 9, 3, 6, 0, 0, 0, time.UTC)},
		{"a <time> giving the same day with a zone still makes a date-only published_time exact",
			`<meta property="article:published_time" content="2024-09-03"><title>T</title><body><h1>T</h1><time itemprop="datePublished" datetime="2024-09-03T07:00:00+01:00">3 Sep</time>`,
			time.Date(2024, 9, 3, 6, 0, 0, 0, time.UTC)},
		{"a <time> marked datePublished is read when nothing else gives a date",
			`<title>T</title><body><h1>T</h1><time itemprop="datePublished" datetime="2024-09-04T08:12:09+01:00">4 Sep</time>`,
			time.Date(2024, 9, 4, 7, 12, 9, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArticle(htmlPage("https://news.example.com/a/story", []byte(tt.html)))
			if err != nil {
				t.Fatal(err)
			}
			if !got.PublishedAt.Equal(tt.want) {
				t.Errorf("PublishedAt = %v, want %v", got.PublishedAt, tt.want)
			}
		})
	}
}
