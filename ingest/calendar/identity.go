package calendar

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/internal/gazetteer"
)

// identify settles the identity of each draft of one document (see doc.go
// for the rule) and merges the drafts that turn out to be one event: the
// same event listed once per date becomes one event with those dates.
func identify(drafts []draft, docURL string) []draft {
	for i := range drafts {
		drafts[i].identity = baseIdentity(drafts[i], docURL, len(drafts) == 1)
	}
	// One identity claimed by differently named events (a listing whose
	// events all point at the listing) is not theirs: each is told apart
	// by its name.
	names := map[string]map[string]bool{}
	for _, dr := range drafts {
		if names[dr.identity] == nil {
			names[dr.identity] = map[string]bool{}
		}
		names[dr.identity][gazetteer.Fold(dr.title)] = true
	}
	for i, dr := range drafts {
		if len(names[dr.identity]) > 1 {
			drafts[i].identity = dr.identity + "#" + gazetteer.Fold(dr.title)
		}
	}
	return merge(drafts)
}

func baseIdentity(dr draft, docURL string, onlyEvent bool) string {
	switch {
	case dr.url != "":
		return "url:" + normalizeURL(dr.url)
	case dr.uid != "":
		return "uid:" + dr.uid
	case onlyEvent:
		return "url:" + normalizeURL(docURL)
	default:
		return "page:" + normalizeURL(docURL) + "#" + gazetteer.Fold(dr.title)
	}
}

// merge folds drafts with one identity into the first: one-off ones into
// a list of dates; a recurring one keeps its own schedule and the others
// are the same event found again.
func merge(drafts []draft) []draft {
	var out []draft
	at := map[string]int{}
	for _, dr := range drafts {
		i, seen := at[dr.identity]
		if !seen {
			at[dr.identity] = len(out)
			out = append(out, dr)
			continue
		}
		first := &out[i]
		if first.when.set != nil || dr.when.set != nil {
			continue
		}
		if len(first.when.dates) == 0 {
			first.when.dates = []instance{dated(first.when)}
		}
		first.when.dates = addDate(first.when.dates, dated(dr.when))
	}
	return out
}

// dated is a one-off event's instance keyed by its original start, as one
// of several dates.
func dated(s schedule) instance {
	orig := s.first.start
	if s.previous != nil {
		orig = *s.previous
	}
	return instance{key: orig.UTC().Format(time.RFC3339), span: s.first, status: s.status, previous: s.previous}
}

func addDate(dates []instance, in instance) []instance {
	if slices.ContainsFunc(dates, func(d instance) bool { return d.key == in.key }) {
		return dates
	}
	i, _ := slices.BinarySearchFunc(dates, in, func(a, b instance) int { return a.span.start.Compare(b.span.start) })
	return slices.Insert(dates, i, in)
}

// trackingParams are query parameters that name a campaign, not a page.
var trackingParams = []string{"utm_", "fbclid", "gclid", "mc_cid", "mc_eid", "ref", "_ga"}

// normalizeURL makes the spellings of one page one identity: lower-case
// scheme and host, no default port, no fragment, no tracking parameters,
// no trailing slash.
func normalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if p := u.Port(); p == "80" && u.Scheme == "http" || p == "443" && u.Scheme == "https" {
		u.Host = u.Hostname()
	}
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if slices.ContainsFunc(trackingParams, func(p string) bool { return k == p || strings.HasSuffix(p, "_") && strings.HasPrefix(k, p) }) {
				q.Del(k)
			}
		}
		u.RawQuery = q.Encode()
	}
	if len(u.Path) > 1 {
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
	}
	return u.String()
}
