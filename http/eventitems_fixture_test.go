package http_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// eventFeed is an event feed of acme whose events are put in through the
// real commands (as ingestion does) and projected by the real projectors.
type eventFeed struct {
	h   *servicetest.Harness
	org uuid.UUID
	id  uuid.UUID
}

func newEventFeed(t testing.TB, h *servicetest.Harness, name string) *eventFeed {
	t.Helper()
	p, err := h.Service.Keys.Authenticate(context.Background(), h.Key)
	if err != nil {
		t.Fatal(err)
	}
	org := p.OrganizationID
	state, res, err := h.Service.Commands.CreateFeed(context.Background(), commands.CreateFeed{
		Kind: domain.FeedHappenings, Org: org, Name: name, Description: "events",
	})
	if err != nil {
		t.Fatal(err)
	}
	projected(t, h, res)
	return &eventFeed{h: h, org: org, id: state.ID}
}

func (f *eventFeed) ref() commands.FeedRef {
	return commands.FeedRef{Kind: domain.FeedHappenings, Org: f.org, FeedID: f.id}
}

func (f *eventFeed) items() string { return "/feeds/events/" + f.id.String() + "/items" }

// attach attaches a site source to the feed.
func (f *eventFeed) attach(t testing.TB, site string) domain.Attachment {
	t.Helper()
	att, res, err := f.h.Service.Commands.AttachSource(context.Background(), commands.AttachSource{
		FeedRef: f.ref(), Request: domain.SourceRequest{SourceType: "site", Domain: &site},
	})
	if err != nil {
		t.Fatal(err)
	}
	projected(t, f.h, res)
	return att
}

// add records the event as found through the attachment's source and puts
// it into the feed through the attachment; it returns the item id.
func (f *eventFeed) add(t testing.TB, att domain.Attachment, d domain.HappeningDetails) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	found, res, err := f.h.Service.Commands.DiscoverHappening(ctx, commands.DiscoverHappening{SourceID: att.SourceID, Details: d})
	if err != nil {
		t.Fatal(err)
	}
	_, addRes, err := f.h.Service.Commands.AddHappeningItem(ctx, commands.AddHappeningItem{
		ItemTarget:  domain.ItemTarget{FeedID: f.id, OrganizationID: f.org, AttachmentID: att.ID, SourceID: att.SourceID, SourceType: att.SourceType},
		HappeningID: found.HappeningID,
	})
	if err != nil {
		t.Fatal(err)
	}
	projected(t, f.h, res.Merge(addRes))
	time.Sleep(2 * time.Millisecond) // distinct addedToFeedAt milliseconds
	return domain.HappeningItemID(f.id, found.HappeningID)
}

// projected returns once the read models reflect res.
func projected(t testing.TB, h *servicetest.Harness, res commands.Result) {
	t.Helper()
	if err := h.Service.Waiter.Wait(context.Background(), res.Position, res.EventTypes); err != nil {
		t.Fatal(err)
	}
}

// span is an occurrence from start for d (no end when d is 0).
type span struct {
	start time.Time
	d     time.Duration
}

// instance is one instance of an event, stated with a status.
func instance(key, status string, spans ...span) domain.HappeningInstance {
	in := domain.HappeningInstance{Key: key, Status: status}
	for _, s := range spans {
		o := domain.Occurrence{Start: s.start}
		if s.d > 0 {
			end := s.start.Add(s.d)
			o.End = &end
		}
		in.Occurrences = append(in.Occurrences, o)
	}
	return in
}

// event is an event found on a page of site.example, named by identity.
func event(identity string, pattern string, instances ...domain.HappeningInstance) domain.HappeningDetails {
	url := "https://site.example/events/" + identity
	return domain.HappeningDetails{
		Identity: url, Title: "Event " + identity, Description: "<p>About " + identity + "</p>",
		Time:      domain.HappeningTime{TemporalPattern: pattern, Timezone: "Europe/Berlin", DisplayText: "See the page"},
		Instances: instances, Source: domain.SiteBlock(url),
	}
}

// oneTime is a singular event with one occurrence.
func oneTime(identity string, start time.Time, d time.Duration) domain.HappeningDetails {
	return event(identity, domain.PatternSingular, instance("0", domain.StatusScheduled, span{start, d}))
}

// weekly is a recurring event with an instance every week from first; the
// statuses map changes some instances' stated status, moved reschedules
// some by a day.
func weekly(identity string, first time.Time, n int, statuses map[int]string, moved map[int]bool) domain.HappeningDetails {
	var instances []domain.HappeningInstance
	for k := range n {
		start := first.Add(time.Duration(k) * 7 * 24 * time.Hour)
		status := domain.StatusScheduled
		if s, ok := statuses[k]; ok {
			status = s
		}
		key := start.UTC().Format(time.RFC3339)
		in := instance(key, status, span{start, 2 * time.Hour})
		if moved[k] {
			prev := start
			in = instance(key, domain.StatusRescheduled, span{start.Add(24 * time.Hour), 2 * time.Hour})
			in.PreviousStart = &prev
		}
		instances = append(instances, in)
	}
	return event(identity, domain.PatternRecurring, instances...)
}

func itemList(t *testing.T, r servicetest.Response) []map[string]any {
	t.Helper()
	raw, ok := r.Data()["items"].([]any)
	if !ok {
		t.Fatalf("no items array in %s", r.Raw)
	}
	out := make([]map[string]any, 0, len(raw))
	for _, v := range raw {
		out = append(out, v.(map[string]any))
	}
	return out
}

// eventIDs are the eventIds of a list, in order.
func eventIDs(t *testing.T, r servicetest.Response) []string {
	t.Helper()
	var out []string
	for _, it := range itemList(t, r) {
		out = append(out, it["eventId"].(string))
	}
	return out
}

func eventIDOf(d domain.HappeningDetails) string { return domain.HappeningID(d.Identity).String() }

// rfc is a query date.
func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func byEvent(t *testing.T, r servicetest.Response, d domain.HappeningDetails) map[string]any {
	t.Helper()
	for _, it := range itemList(t, r) {
		if it["eventId"] == eventIDOf(d) {
			return it
		}
	}
	t.Fatalf("event %s is not in %s", d.Identity, r.Raw)
	return nil
}

func occurrenceBlock(it map[string]any) map[string]any { return it["occurrence"].(map[string]any) }

func num(v any) int {
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return int(f)
}

func fmtIDs(ids ...domain.HappeningDetails) []string {
	out := make([]string, 0, len(ids))
	for _, d := range ids {
		out = append(out, eventIDOf(d))
	}
	return out
}

func sameList(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
