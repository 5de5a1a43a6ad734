package crawl

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/ingest/document"
)

// maxFreshness bounds what a response may claim about its own freshness: a
// year-long max-age is a misconfiguration, not a promise. The scheduler
// caps it again, at its own bounds (ingest/schedule.go).
const maxFreshness = 7 * 24 * time.Hour

// headerFreshness is how long a response says it stays fresh: the longer
// of Cache-Control max-age (s-maxage for shared caches is not ours) and
// Expires relative to the response's Date (or now), which counts only
// without Cache-Control. No cache, no store, and Expires "0" or in the
// past say nothing. throttle is its Retry-After, which a site may send
// with any answer to ask to be left alone for a while.
func headerFreshness(h http.Header, now time.Time) (fresh, throttle document.Hint) {
	if d := min(retryAfter(h.Get("Retry-After")), maxFreshness); d > 0 {
		throttle = document.Hint{For: d, By: document.ByRetryAfter}
	}
	cacheControl := h.Values("Cache-Control")
	for _, cc := range cacheControl {
		for dir := range strings.SplitSeq(cc, ",") {
			dir = strings.ToLower(strings.TrimSpace(dir))
			if dir == "no-cache" || dir == "no-store" {
				return document.Hint{}, throttle
			}
			if v, ok := strings.CutPrefix(dir, "max-age="); ok {
				if s, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64); err == nil && s > 0 {
					d := time.Duration(min(s, int64(maxFreshness/time.Second))) * time.Second
					fresh = fresh.Longer(document.Hint{For: d, By: document.ByCacheControl})
				}
			}
		}
	}
	if exp := h.Get("Expires"); exp != "" && len(cacheControl) == 0 {
		// Cache-Control takes precedence over Expires (RFC 9111 5.3).
		if t, err := http.ParseTime(exp); err == nil {
			base := now
			if date, err := http.ParseTime(h.Get("Date")); err == nil {
				base = date
			}
			if d := min(t.Sub(base), maxFreshness); d > 0 {
				fresh = document.Hint{For: d, By: document.ByExpires}
			}
		}
	}
	return fresh, throttle
}

// feedFreshness is what an RSS channel says about how often to read it:
// <ttl> in minutes, or the Syndication module's sy:updatePeriod and
// sy:updateFrequency (updates per period), the longer of the two. Only the
// channel's head is read, up to its first item. Zero when it says nothing
// or is not RSS.
func feedFreshness(body []byte) document.Hint {
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = false
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var ttl, period time.Duration
	freq := 1
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		name := strings.ToLower(se.Name.Local)
		if name == "item" || name == "entry" {
			break
		}
		var text string
		switch name {
		case "ttl", "updateperiod", "updatefrequency":
			if err := dec.DecodeElement(&text, &se); err != nil {
				continue
			}
		default:
			continue
		}
		text = strings.TrimSpace(text)
		switch name {
		case "ttl":
			if m, err := strconv.Atoi(text); err == nil && m > 0 {
				ttl = time.Duration(m) * time.Minute
			}
		case "updateperiod":
			period = map[string]time.Duration{"hourly": time.Hour, "daily": 24 * time.Hour,
				"weekly": 7 * 24 * time.Hour, "monthly": 30 * 24 * time.Hour, "yearly": 365 * 24 * time.Hour}[strings.ToLower(text)]
		case "updatefrequency":
			if f, err := strconv.Atoi(text); err == nil && f > 0 {
				freq = f
			}
		}
	}
	h := document.Hint{For: min(ttl, maxFreshness), By: document.ByFeedTTL}
	if period > 0 {
		h = h.Longer(document.Hint{For: min(period/time.Duration(freq), maxFreshness), By: document.ByFeedUpdatePeriod})
	}
	if h.For <= 0 {
		return document.Hint{}
	}
	return h
}
