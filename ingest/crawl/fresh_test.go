package crawl

import (
	"net/http"
	"testing"
	"time"
)

func TestAResponseSaysHowLongItStaysFreshByItsHeaders(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	date := now.Format(http.TimeFormat)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"nothing says nothing", nil, 0},
		{"max-age is read among other directives", map[string]string{"Cache-Control": "public, max-age=600, must-revalidate"}, 10 * time.Minute},
		{"no-cache says nothing whatever the max-age", map[string]string{"Cache-Control": "no-cache, max-age=600"}, 0},
		{"Expires counts from the response's Date", map[string]string{"Date": date, "Expires": now.Add(time.Hour).Format(http.TimeFormat)}, time.Hour},
		{"Expires in the past says nothing", map[string]string{"Date": date, "Expires": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"Cache-Control overrides Expires", map[string]string{"Cache-Control": "max-age=60", "Date": date, "Expires": now.Add(time.Hour).Format(http.TimeFormat)}, time.Minute},
		{"Retry-After in seconds counts", map[string]string{"Retry-After": "900"}, 15 * time.Minute},
		{"a year is bounded to a week", map[string]string{"Cache-Control": "max-age=31536000"}, maxFreshness},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := headerFreshness(h, now); got != tt.want {
				t.Errorf("headerFreshness = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAFeedSaysHowOftenToReadItByTTLOrTheSyndicationModule(t *testing.T) {
	rss := func(head string) []byte {
		return []byte(`<?xml version="1.0"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>T</title>` +
			head + `<item><title>x</title><ttl>999</ttl></item></channel></rss>`)
	}
	tests := []struct {
		name string
		body []byte
		want time.Duration
	}{
		{"a channel without either says nothing (an item's ttl is not the channel's)", rss(""), 0},
		{"ttl is minutes", rss("<ttl>45</ttl>"), 45 * time.Minute},
		{"updatePeriod alone is once per period", rss("<sy:updatePeriod>hourly</sy:updatePeriod>"), time.Hour},
		{"updateFrequency divides the period", rss("<sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>4</sy:updateFrequency>"), 6 * time.Hour},
		{"the longer of ttl and the period wins", rss("<ttl>30</ttl><sy:updatePeriod>hourly</sy:updatePeriod>"), time.Hour},
		{"an Atom feed says nothing", []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry/></feed>`), 0},
		{"a yearly period is bounded to a week", rss("<sy:updatePeriod>yearly</sy:updatePeriod>"), maxFreshness},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := feedFreshness(tt.body); got != tt.want {
				t.Errorf("feedFreshness = %v, want %v", got, tt.want)
			}
		})
	}
}
