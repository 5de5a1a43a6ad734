package crawl

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxFreshness bounds what a response may claim about its own freshness: a
// year-long max-age is a misconfiguration, not a promise. The scheduler
// caps it again at its own ceiling.
const maxFreshness = 7 * 24 * time.Hour

// headerFreshness is how long a response says it stays fresh: the longest
// of Cache-Control max-age (s-maxage for shared caches is not ours),
// Expires relative to the response's Date (or now), and Retry-After. No
// cache, no store, and Expires "0" or in the past say zero.
func headerFreshness(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	for _, cc := range h.Values("Cache-Control") {
		for dir := range strings.SplitSeq(cc, ",") {
			dir = strings.ToLower(strings.TrimSpace(dir))
			if dir == "no-cache" || dir == "no-store" {
				return 0
			}
			if v, ok := strings.CutPrefix(dir, "max-age="); ok {
				if s, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64); err == nil && s > 0 {
					d = max(d, time.Duration(min(s, int64(maxFreshness/time.Second)))*time.Second)
				}
			}
		}
	}
	if exp := h.Get("Expires"); exp != "" && h.Get("Cache-Control") == "" {
		// Cache-Control takes precedence over Expires (RFC 9111 5.3).
		if t, err := http.ParseTime(exp); err == nil {
			base := now
			if date, err := http.ParseTime(h.Get("Date")); err == nil {
				base = date
			}
			d = max(d, t.Sub(base))
		}
	}
	d = max(d, retryAfter(h.Get("Retry-After")))
	return min(max(d, 0), maxFreshness)
}

// feedFreshness is what an RSS channel says about how often to read it:
// <ttl> in minutes, or the Syndication module's sy:updatePeriod and
// sy:updateFrequency (updates per period). Only the channel's head is read,
// up to its first item. Zero when it says nothing or is not RSS.
func feedFreshness(body []byte) time.Duration {
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
	d := ttl
	if period > 0 {
		d = max(d, period/time.Duration(freq))
	}
	return min(d, maxFreshness)
}
