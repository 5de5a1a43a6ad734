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
