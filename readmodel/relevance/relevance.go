// Package relevance scores how well an event fits an event feed's config
// (D9: config.geo and config.keywords), for the item's relevanceScore.
//
// The score is 0-100, higher is more relevant:
//
//   - geo (when config.geo is set): with d the great-circle distance from
//     the feed's point to the event's coordinates and r the feed's
//     radiusKm, 100 - 50·d/r inside the radius (100 at the point, 50 at
//     its edge), then falling linearly to 0 at 2r. An event without
//     coordinates of its own is placed at its locality's centre when the
//     gazetteer knows it (Location.ApproximateCoordinates, set at
//     extraction); else (online, or no known place) it scores 0.
//   - keywords (when config.keywords is non-empty): the mean over the
//     keywords of 1 when the keyword is in the title, 0.5 when only in the
//     description, else 0, times 100. Matching ignores case and accents and
//     needs whole words ("art" does not match "party").
//   - both set: the mean of the two; one set: that one; neither: no score
//     (ok false), and the item omits relevanceScore.
//
// Scores are rounded to one decimal.
package relevance

import (
	"html"
	"math"
	"strings"

	xhtml "golang.org/x/net/html"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/internal/gazetteer"
)

// Score is the relevance of an event to a feed's config; ok is false when
// the config has neither geo nor keywords.
func Score(d domain.HappeningDetails, cfg domain.FeedConfig) (score float64, ok bool) {
	var parts []float64
	if cfg.Geo != nil {
		parts = append(parts, geoScore(d.Location, *cfg.Geo))
	}
	if len(cfg.Keywords) > 0 {
		parts = append(parts, keywordScore(d, cfg.Keywords))
	}
	if len(parts) == 0 {
		return 0, false
	}
	sum := 0.0
	for _, p := range parts {
		sum += p
	}
	return math.Round(sum/float64(len(parts))*10) / 10, true
}

func geoScore(where *domain.Location, area domain.GeoArea) float64 {
	if where == nil || area.RadiusKm <= 0 {
		return 0
	}
	at := where.Coordinates
	if at == nil {
		at = where.ApproximateCoordinates
	}
	if at == nil {
		return 0
	}
	d := gazetteer.DistanceKm(area.Lat, area.Lng, at.Lat, at.Lng)
	r := area.RadiusKm
	switch {
	case d <= r:
		return 100 - 50*d/r
	case d < 2*r:
		return 50 * (2*r - d) / r
	default:
		return 0
	}
}

func keywordScore(d domain.HappeningDetails, keywords []string) float64 {
	title := " " + gazetteer.Fold(text(d.Title)) + " "
	desc := " " + gazetteer.Fold(text(d.Description)) + " "
	sum := 0.0
	n := 0
	for _, k := range keywords {
		k = gazetteer.Fold(k)
		if k == "" {
			continue
		}
		n++
		switch {
		case strings.Contains(title, " "+k+" "):
			sum++
		case strings.Contains(desc, " "+k+" "):
			sum += 0.5
		}
	}
	if n == 0 {
		return 0
	}
	return 100 * sum / float64(n)
}

// text is the text of sanitised HTML.
func text(s string) string {
	var b strings.Builder
	z := xhtml.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return html.UnescapeString(b.String())
		case xhtml.TextToken:
			b.Write(z.Raw())
		default:
			b.WriteByte(' ')
		}
	}
}
