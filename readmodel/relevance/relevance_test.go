package relevance

import (
	"testing"

	"github.com/feedsvc/feedsvc/domain"
)

func config(t *testing.T, raw string) domain.FeedConfig {
	t.Helper()
	c, err := domain.ParseFeedConfig([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestScore(t *testing.T) {
	berlin := &domain.Location{Coordinates: &domain.Coordinates{Lat: 52.52, Lng: 13.405}}
	// Potsdam is about 27 km from central Berlin; Leipzig about 150 km.
	potsdam := &domain.Location{Coordinates: &domain.Coordinates{Lat: 52.3906, Lng: 13.0645}}
	leipzig := &domain.Location{Coordinates: &domain.Coordinates{Lat: 51.3397, Lng: 12.3731}}
	jazz := domain.HappeningDetails{Title: "Jazz &amp; Blues Night", Description: "<p>Live music with the Trio Blau, then a <b>jam session</b>.</p>"}
	tests := []struct {
		name   string
		event  domain.HappeningDetails
		config string
		want   float64
		wantOK bool
	}{
		{"a config with neither geo nor keywords gives no score", jazz, `{}`, 0, false},
		{"an event at the feed's point scores 100", domain.HappeningDetails{Location: berlin}, `{"geo":{"lat":52.52,"lng":13.405,"radiusKm":50}}`, 100, true},
		{"an event inside the radius scores between 100 and 50", domain.HappeningDetails{Location: potsdam}, `{"geo":{"lat":52.52,"lng":13.405,"radiusKm":50}}`, 72.8, true},
		{"an event beyond twice the radius scores 0", domain.HappeningDetails{Location: leipzig}, `{"geo":{"lat":52.52,"lng":13.405,"radiusKm":50}}`, 0, true},
		{"an event without coordinates scores 0 on geo", jazz, `{"geo":{"lat":52.52,"lng":13.405,"radiusKm":50}}`, 0, true},
		{"an event placed only at its locality's centre scores by it", domain.HappeningDetails{Location: &domain.Location{Locality: "Potsdam", ApproximateCoordinates: potsdam.Coordinates}},
			`{"geo":{"lat":52.52,"lng":13.405,"radiusKm":50}}`, 72.8, true},
		{"an event's own coordinates win over its locality's", domain.HappeningDetails{Location: &domain.Location{Coordinates: berlin.Coordinates, ApproximateCoordinates: leipzig.Coordinates}},
			`{"geo":{"lat":52.52,"lng":13.405,"radiusKm":50}}`, 100, true},
		{"a keyword in the title counts fully", jazz, `{"keywords":["jazz"]}`, 100, true},
		{"a keyword only in the description counts half", jazz, `{"keywords":["Jam Session"]}`, 50, true},
		{"keywords are whole words", jazz, `{"keywords":["ass"]}`, 0, true},
		{"the keyword score is the mean over the keywords", jazz, `{"keywords":["blues","music","opera"]}`, 50, true},
		{"geo and keywords are averaged", domain.HappeningDetails{Title: jazz.Title, Location: berlin}, `{"geo":{"lat":52.52,"lng":13.405,"radiusKm":50},"keywords":["jazz","rock"]}`, 75, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Score(tt.event, config(t, tt.config))
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("Score = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
