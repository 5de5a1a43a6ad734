package web

import (
	"errors"
	"net/http"

	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/crawl"
)

// judge attaches the web's judgement to a crawl error: permanent as
// crawl.Permanent has it; about the whole site when robots.txt could not be
// read (no page may be fetched without it) or the site answered 429 (which
// is about our request rate, not the page); with the site's Retry-After.
func judge(err error) error {
	if err == nil {
		return nil
	}
	j := connector.Judgement{Permanent: crawl.Permanent(err), SourceWide: errors.Is(err, crawl.ErrRobotsUnavailable)}
	var se *crawl.StatusError
	if errors.As(err, &se) {
		j.RetryAfter = se.RetryAfter
		j.SourceWide = j.SourceWide || se.StatusCode == http.StatusTooManyRequests
	}
	return connector.Judged(err, j)
}
