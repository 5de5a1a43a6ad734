package connector

import (
	"errors"
	"time"
)

// Judgement is what a connector says about one of its failures, for the
// worker to decide between retrying the document, giving it up, and
// backing the whole source off. Only the connector can judge: what is a
// lasting answer differs between a website and a platform's API.
type Judgement struct {
	// Permanent: the source answered, or policy refused, and asking again
	// will not change it (a 404, a page too large, disallowed by
	// robots.txt). Anything not judged permanent may pass.
	Permanent bool
	// SourceWide: the failure is about every document of the source, not
	// this one (robots.txt unreadable, asked to slow down), so the crawl
	// stops and the source backs off.
	SourceWide bool
	// RetryAfter is how long the source asked to be left alone; zero when
	// it did not say.
	RetryAfter time.Duration
}

// judged is an error with its connector's judgement.
type judged struct {
	err error
	j   Judgement
}

func (e *judged) Error() string { return e.err.Error() }
func (e *judged) Unwrap() error { return e.err }

// Judged attaches a judgement to err; nil stays nil.
func Judged(err error, j Judgement) error {
	if err == nil {
		return nil
	}
	return &judged{err: err, j: j}
}

// JudgementOf returns the judgement attached to err or to an error it
// wraps; an error no connector judged is transient.
func JudgementOf(err error) Judgement {
	var j *judged
	if errors.As(err, &j) {
		return j.j
	}
	return Judgement{}
}
