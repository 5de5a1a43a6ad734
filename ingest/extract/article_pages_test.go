package extract

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestParseArticleReadsPagesAsAReaderWould runs pages shaped like the
// real sites that show each class of miss (testdata/articles) and expects
// the title, description and date a careful reader would pick.
func TestParseArticleReadsPagesAsAReaderWould(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	}
	tests := []struct {
		name      string
		file      string
		pageURL   string
		title     string
		desc      string
		published time.Time
	}{
		{
			name:    "an encyclopedia's JSON-LD name beats a headline holding a summary, because it agrees with <title>",
			file:    "wikipedia-headline-is-a-summary.html",
			pageURL: "https://en.wikipedia.org/wiki/Lake_Varnholm",
			title:   "Lake Varnholm",
			desc: "Lake Varnholm (Examplish: Varnholmsjön) is a glacial lake in the northern uplands of Examplia. " +
				"It covers 41 square kilometres and drains north through the Esk river. The lake freezes for about five months " +
				"of the year and is known for its clear water and its population of Arctic char.",
			published: utc(2004, 6, 12, 9, 21, 40),
		},
		{
			name:      "a blog whose first h1 is the site name takes the post's h1, and a short first paragraph is its lead",
			file:      "blog-site-name-in-first-h1.html",
			pageURL:   "https://fieldnotes.example.net/2024/02/19/why-our-build-cache-kept-missing/",
			title:     "Why our build cache kept missing",
			desc:      "For three weeks our CI spent more time rebuilding than testing.",
			published: utc(2024, 2, 19, 14, 5, 0),
		},
		{
			name:      "a newspaper whose h1 is its og:site_name takes <title> without the site name in front",
			file:      "news-site-name-first-in-title.html",
			pageURL:   "https://www.kestrelbaygazette.example/news/2024/03/08/harbour-ferry-timetable",
			title:     "Harbour ferry timetable changes from Monday",
			desc:      "The harbour ferry will run every 30 minutes instead of every 20 from Monday, the operator has confirmed.",
			published: utc(2024, 3, 8, 17, 40, 0),
		},
		{
			name:    "a lead paragraph is read without its inline script and style, and hidden paragraphs and spans are skipped",
			file:    "news-script-and-hidden-text-in-lead.html",
			pageURL: "https://www.millbrookcourier.example/news/local/millbrook-to-vote-on-railway-yard-park-a1187",
			title:   "Millbrook to vote on railway yard park",
			desc: "Residents of Millbrook will vote next month on whether to turn the old railway yard into a park. " +
				"The council says the plan would cost less than the new bus depot it had proposed for the site.",
			published: utc(2024, 4, 16, 17, 30, 0),
		},
		{
			name:    "a forum post written straight into a div is the description, and the board's name in the h1 is not the title",
			file:    "forum-post-text-in-div.html",
			pageURL: "https://forum.trailmark.example/viewtopic.php?t=8812",
			title:   "Battery drains overnight after 2.3 update",
			desc: "Since updating to 2.3 my unit loses about half its charge overnight while switched off. " +
				"Before the update it would sit in a drawer for a week. Anyone else seeing this?",
			published: utc(2024, 1, 9, 21, 14, 37),
		},
		{
			name:      "a one-sentence standfirst in a section is the lead, not the longer text after it",
			file:      "news-short-lead-in-section.html",
			pageURL:   "https://www.coastlinedaily.example/local/transport/harbour-bridge-to-close-for-three-weeks",
			title:     "Harbour bridge to close for three weeks",
			desc:      "Engineers found corroded cables during a routine check.",
			published: utc(2024, 5, 1, 20, 0, 0),
		},
		{
			name:      "meta tags naming several properties in one attribute give each of them",
			file:      "static-blog-several-names-per-attribute.html",
			pageURL:   "https://ana.example.dev/posts/profiling-a-slow-query-plan/",
			title:     "Profiling a slow Postgres query plan",
			desc:      "How a missing statistics target turned a 4 ms lookup into a 9 second sequential scan, and the two queries that showed it.",
			published: utc(2024, 4, 2, 14, 30, 0),
		},
		{
			name:      "article:published_time beats the JSON-LD dateCreated of the draft",
			file:      "newspaper-datecreated-before-published-time.html",
			pageURL:   "https://www.northernledger.example/travel/2024/03/12/night-trains-return-alpine-line/",
			title:     "Night trains return to the Alpine line in December",
			desc:      "The operator will run three sleepers a week between the capital and the valley towns from 15 December.",
			published: utc(2024, 3, 12, 5, 0, 0),
		},
		{
			name:      "a datePublished without a zone is read in the zone the site declares, summer time included",
			file:      "regional-news-zoneless-date-in-declared-zone.html",
			pageURL:   "https://www.weserland-anzeiger.example/region/osterverkehr-staus-a7-100.html",
			title:     "Osterverkehr: Staus auf der A7 bis in den Abend",
			desc:      "Am Ostersonntag stauten sich die Autos zwischen Hann. Münden und Göttingen auf bis zu 18 Kilometern.",
			published: utc(2024, 3, 31, 6, 30, 0),
		},
		{
			name:      "a date-only datePublished keeps the zone and time article:published_time gives for the same day",
			file:      "news-date-only-published-with-zoned-time.html",
			pageURL:   "https://www.westernstandard.example/cities/mumbai/monsoon-reaches-mumbai-two-days-early/articleshow/110123.cms",
			title:     "Monsoon reaches Mumbai two days ahead of forecast",
			desc:      "Heavy showers lashed the city on Thursday morning as the south-west monsoon arrived earlier than the weather office had predicted.",
			published: utc(2024, 7, 4, 3, 45, 0),
		},
		{
			name:      "a government page with only Dublin Core metadata takes its title and description from it",
			file:      "government-media-release-dublin-core.html",
			pageURL:   "https://www.water.gov.example/media-releases/new-rules-private-bores-take-effect-april",
			title:     "New rules for private bores take effect in April",
			desc:      "Landholders with a private bore will need to register it and meter water taken for irrigation from 1 April 2024.",
			published: utc(2024, 2, 7, 0, 0, 0),
		},
		{
			name:      "OpenGraph's title beats Dublin Core's, and Dublin Core in RDFa fills what OpenGraph lacks",
			file:      "library-blog-opengraph-before-dublin-core.html",
			pageURL:   "https://library.examplia.example/blog/from-the-stacks-1911-flood-photographs",
			title:     "From the stacks: the 1911 flood photographs",
			desc:      "A box of glass plate negatives found in a donated trunk shows Bridge Street under a metre of water in March 1911.",
			published: utc(2024, 5, 21, 0, 0, 0),
		},
		{
			name:    "a documentation page whose h1 is the site name after an em dash in <title> takes the part before it",
			file:    "docs-site-name-h1-after-em-dash.html",
			pageURL: "https://docs.acme.example/manual/guide/upgrading.html",
			title:   "Upgrading: Moving Your Data",
			desc:    "Version 3 stores widgets in a new format, so an upgrade copies your data once and keeps the old files until you remove them.",
		},
		{
			name:    "a paragraph that starts mid-sentence after a display formula, with holes where inline math stood, is passed over for the first that reads as a sentence",
			file:    "encyclopedia-lead-after-display-formula.html",
			pageURL: "https://en.examplipedia.example/wiki/Kinetic_energy",
			title:   "Kinetic energy",
			desc: "In physics, the kinetic energy of an object is the form of energy that it possesses due to its motion. " +
				"It is defined as the work needed to accelerate a body of a given mass from rest to its stated velocity.",
		},
		{
			name:      "a weekly edition's front page listing several stories is described by its own lead, not the first story's body",
			file:      "weekly-edition-front-page.html",
			pageURL:   "https://harbourweekly.example/edition/2024-06-12/",
			title:     "Weekly edition for 12 June 2024",
			desc:      "This week: the council's budget vote, the ferry's summer timetable, and who is cooking at the harbour fair.",
			published: utc(2024, 6, 12, 0, 0, 0),
		},
		{
			name:      "article:published_time beats a visible <time> marked datePublished that disagrees with it",
			file:      "news-published-time-against-visible-time.html",
			pageURL:   "https://www.coastwatchnews.example/2024/09/03/lifeboat-station-reopens/",
			title:     "Lifeboat station reopens after two-year rebuild",
			desc:      "The rebuilt lifeboat station at Penmarrow opened on Tuesday with a launch watched by several hundred people.",
			published: utc(2024, 9, 3, 6, 0, 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "articles", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseArticle(htmlPage(tt.pageURL, body))
			if err != nil {
				t.Fatalf("ParseArticle: %v", err)
			}
			if got.Title != tt.title {
				t.Errorf("Title = %q, want %q", got.Title, tt.title)
			}
			if got.Description != tt.desc {
				t.Errorf("Description = %q\nwant %q", got.Description, tt.desc)
			}
			if !got.PublishedAt.Equal(tt.published) || got.PublishedAt.Location() != time.UTC {
				t.Errorf("PublishedAt = %v, want %v in UTC", got.PublishedAt, tt.published.UTC())
			}
		})
	}
}
