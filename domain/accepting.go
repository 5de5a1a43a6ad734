package domain

import "time"

// AcceptingSince is the moment from which an attachment takes items: its
// attach time minus the backfill window (api.md 3), but never before the
// latest time its source or its feed was enabled again after being
// disabled, so that what was published while it was disabled is not
// backfilled. sourceEnabledAt and feedEnabledAt are those latest
// re-enables, zero when there was none since the attachment.
func AcceptingSince(attachedAt, sourceEnabledAt, feedEnabledAt time.Time) time.Time {
	since := attachedAt.Add(-BackfillWindow)
	for _, t := range []time.Time{sourceEnabledAt, feedEnabledAt} {
		if t.After(since) {
			since = t
		}
	}
	return since
}

// Accepts is the rule that decides whether an attachment takes an article:
// the attachment and its feed are enabled, and the article's effective
// time is not before the attachment's AcceptingSince.
func Accepts(enabled bool, acceptingSince, effectiveAt time.Time) bool {
	return enabled && !effectiveAt.Before(acceptingSince)
}

// AcceptsHappening is the rule for event feeds (api.md 4.5): an enabled
// attachment takes a happening that the source published or changed since
// the attachment's AcceptingSince, or that still has an occurrence ending
// after now, whenever it was published.
func AcceptsHappening(enabled bool, acceptingSince, changedAt, lastEnd, now time.Time) bool {
	return enabled && (!changedAt.Before(acceptingSince) || lastEnd.After(now))
}
