package http

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/http/feedout"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/happeningitems"
)

// The calendar's window: the list's (7 days back, 30 ahead), from the
// start of the current UTC day, so that the output (and its ETag) stays
// the same through a day in which nothing changes.
const (
	calendarPast  = eventWindowPast
	calendarAhead = eventWindowAhead + 24*time.Hour
	// calendarMaxEvents bounds one calendar; a feed with more events in
	// the window shows the soonest.
	calendarMaxEvents = 2000
)

// calendarWindow is the window of a calendar fetched at now.
func calendarWindow(now time.Time) (from, to time.Time) {
	day := now.UTC().Truncate(24 * time.Hour)
	return day.Add(-calendarPast), day.Add(calendarAhead)
}

func (h *handlers) calendarOutput(c *fiber.Ctx) error {
	feedID, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	return h.writeCalendar(c, organization(c), feedID)
}

// writeCalendar renders an event feed of org as iCalendar: the events
// with an occurrence in the window, each with its instances there.
func (h *handlers) writeCalendar(c *fiber.Ctx, org, feedID uuid.UUID) error {
	ctx := c.UserContext()
	feed, err := h.Reads.Feeds.Feed(ctx, domain.FeedHappenings, org, feedID)
	if err != nil {
		return err
	}
	now := domain.Now()
	from, to := calendarWindow(now)
	f := happeningitems.Filter{Since: from, Until: to, Now: now, OrderBy: happeningitems.OrderByOccurrence, Limit: maxItemLimit}
	var (
		ids    []uuid.UUID
		views  []uuid.UUID
		latest *changes.Key
	)
	for len(ids) < calendarMaxEvents {
		page, err := h.Reads.Happenings.Items(ctx, org, feedID, f)
		if err != nil {
			return err
		}
		if latest == nil {
			// The feed's latest change, read with the first page: any
			// change after it moves the tag.
			k := page.Changes.Next
			latest = &k
		}
		for _, it := range page.Items {
			// An item other sources list too is shown merged (ViewID),
			// under its own happening's UID.
			ids, views = append(ids, it.HappeningID), append(views, it.ViewID)
		}
		f.Offset += len(page.Items)
		if len(page.Items) < f.Limit || f.Offset >= page.Total {
			break
		}
	}
	events, err := h.Reads.Happenings.CalendarHappenings(ctx, views)
	if err != nil {
		return err
	}
	modified := feed.UpdatedAt
	cal := feedout.Calendar{FeedID: feedID, Name: feed.Name, Description: feed.Description, From: from, To: to}
	for k, id := range ids {
		ev, ok := events[views[k]]
		if !ok {
			continue
		}
		if ev.UpdatedAt.After(modified) {
			modified = ev.UpdatedAt
		}
		var shown []domain.HappeningInstance
		for _, in := range ev.Details.Instances {
			for _, o := range in.Occurrences {
				if o.Overlaps(&from, &to) {
					shown = append(shown, in)
					break
				}
			}
		}
		cal.Events = append(cal.Events, feedout.Happening{ID: id, Details: ev.Details, Instances: shown, Sequence: ev.Sequence(), Updated: ev.UpdatedAt})
	}
	tag := etag("ics", selfURL(c), feed.Name, feed.Description, feed.UpdatedAt, from, latest.Commit, latest.Prepare, latest.Item[:])
	if notModified(c, tag, modified) {
		return nil
	}
	c.Set(fiber.HeaderContentType, feedout.CalendarType)
	return c.Status(fiber.StatusOK).Send(feedout.ICalendar(cal))
}
