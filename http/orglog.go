package http

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/transport"
	"github.com/feedsvc/feedsvc/readmodel/changes"
	"github.com/feedsvc/feedsvc/readmodel/orglog"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// The organization's log: GET /log pages the events of the caller's
// organization in log order from a position, GET /log/stream follows them
// live (Server-Sent Events, or NDJSON), resuming after a position. Each
// event is logEventJSON; its position is where to resume.

// LogQueries read the organizations' logs (readmodel/orglog).
type LogQueries interface {
	Read(ctx context.Context, org uuid.UUID, f orglog.Filter) (orglog.Page, error)
	Latest(ctx context.Context, org uuid.UUID) (eventstore.Position, error)
	LatestOf(ctx context.Context, orgs []uuid.UUID) (map[uuid.UUID]eventstore.Position, error)
}

const (
	defaultLogLimit = 100
	maxLogLimit     = 1000
)

// logStreamKind keys an organization's log stream among the live streams
// (transport.StreamFeed), which are otherwise a feed kind's: no feed has
// it, so the poller asks the log, not an item list, where it ends.
const logStreamKind domain.FeedKind = "log"

// logEventJSON is one event of the log, as GET /log lists it and its
// stream sends it.
type logEventJSON struct {
	Position      string          `json:"position"`
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schemaVersion"`
	RecordedAt    string          `json:"recordedAt"`
	FeedIDs       []string        `json:"feedIds"`
	Data          json.RawMessage `json:"data"`
}

type logPagination struct {
	Limit int `json:"limit"`
	// Next is the position the next page starts after: the last event's,
	// or where the log ended when the page was read.
	Next    string `json:"nextPosition"`
	HasMore bool   `json:"hasMore"`
}

type logPage struct {
	Events     []logEventJSON `json:"events"`
	Pagination logPagination  `json:"pagination"`
}

func logEventOut(e orglog.Entry) logEventJSON {
	feeds := make([]string, len(e.FeedIDs))
	for i, f := range e.FeedIDs {
		feeds[i] = f.String()
	}
	return logEventJSON{
		Position: orglog.FormatPosition(e.Position), ID: e.EventID.String(), Type: e.Type, SchemaVersion: e.SchemaVersion,
		RecordedAt: shape.Timestamp(e.RecordedAt), FeedIDs: feeds, Data: e.Data,
	}
}

var logTypeIssue = "must be a comma-separated list of the log's event types: " + strings.Join(orglog.Types(), ", ")

// logFilter reads the filters GET /log and its stream share: type and
// feedId; and limit.
func logFilter(c *fiber.Ctx) (orglog.Filter, error) {
	var f orglog.Filter
	if raw := c.Query("type"); raw != "" {
		known := orglog.Types()
		for _, t := range strings.Split(raw, ",") {
			if t = strings.TrimSpace(t); !slices.Contains(known, t) {
				return f, envelope.BadRequest("type", logTypeIssue)
			}
			if !slices.Contains(f.Types, t) {
				f.Types = append(f.Types, t)
			}
		}
	} else if c.Context().QueryArgs().Has("type") {
		return f, envelope.BadRequest("type", logTypeIssue)
	}
	if raw := c.Query("feedId"); raw != "" || c.Context().QueryArgs().Has("feedId") {
		id, err := parseUUID("feedId", raw)
		if err != nil {
			return f, err
		}
		f.FeedID = &id
	}
	var err error
	f.Limit, err = intParam(c, "limit", defaultLogLimit, 1, maxLogLimit)
	return f, err
}

// positionParam reads a position (the log's "<commit>-<prepare>"); empty
// is the beginning. The error never quotes the value.
func positionParam(field, raw string) (eventstore.Position, error) {
	if raw == "" {
		return eventstore.Start, nil
	}
	p, ok := orglog.ParsePosition(raw)
	if !ok {
		return p, envelope.BadRequest(field, "must be a position of the log as its events give it (\"<number>-<number>\"), or empty for the beginning")
	}
	return p, nil
}

// readLog answers GET /log.
func (h *handlers) readLog(c *fiber.Ctx) error {
	f, err := logFilter(c)
	if err != nil {
		return err
	}
	if f.After, err = positionParam("after", c.Query("after")); err != nil {
		return err
	}
	page, err := h.Reads.Log.Read(c.UserContext(), organization(c), f)
	if err != nil {
		return err
	}
	out := logPage{Events: make([]logEventJSON, 0, len(page.Entries)),
		Pagination: logPagination{Limit: f.Limit, Next: orglog.FormatPosition(page.Next), HasMore: page.HasMore}}
	for _, e := range page.Entries {
		out.Events = append(out.Events, logEventOut(e))
	}
	return envelope.OK(c, fiber.StatusOK, out)
}

// logStream answers GET /log/stream: Server-Sent Events, or NDJSON when
// the client accepts application/x-ndjson (and not text/event-stream
// first).
func (h *handlers) logStream(c *fiber.Ctx) error {
	f, err := logFilter(c)
	if err != nil {
		return err
	}
	org := organization(c)
	// Where to resume: Last-Event-ID (an EventSource reconnecting), else
	// ?after= (empty: the beginning); neither: from now on.
	var start *eventstore.Position
	if raw := c.Get(headerLastEventID); raw != "" {
		p, err := positionParam(headerLastEventID, raw)
		if err != nil {
			return err
		}
		start = &p
	} else if c.Context().QueryArgs().Has("after") {
		p, err := positionParam("after", c.Query("after"))
		if err != nil {
			return err
		}
		start = &p
	}
	if start == nil {
		latest, err := h.Reads.Log.Latest(c.UserContext(), org)
		if err != nil {
			return err
		}
		start = &latest
	}
	format := transport.SSE
	if c.Accepts("text/event-stream", "application/x-ndjson") == "application/x-ndjson" {
		format = transport.NDJSON
	}
	f.Limit = maxLogLimit
	read := func(ctx context.Context, after changes.Key) (transport.StreamPage, error) {
		f.After = eventstore.Position{Commit: after.Commit, Prepare: after.Prepare}
		page, err := h.Reads.Log.Read(ctx, org, f)
		if err != nil {
			return transport.StreamPage{}, err
		}
		out := transport.StreamPage{Next: changes.Key{Commit: page.Next.Commit, Prepare: page.Next.Prepare}, More: page.HasMore,
			Events: make([]transport.StreamEvent, 0, len(page.Entries))}
		for _, e := range page.Entries {
			data, err := json.Marshal(logEventOut(e))
			if err != nil {
				return transport.StreamPage{}, fmt.Errorf("render log event %s: %w", e.EventID, err)
			}
			out.Events = append(out.Events, transport.StreamEvent{ID: orglog.FormatPosition(e.Position), Name: e.Type, Data: data})
		}
		return out, nil
	}
	return h.streams.ServeAs(c, transport.StreamFeed{Kind: logStreamKind, ID: org},
		changes.Key{Commit: start.Commit, Prepare: start.Prepare}, read, format)
}

// latestLogPositions are where the logs of orgs end, as the streams'
// poller compares them.
func (r Reads) latestLogPositions(ctx context.Context, orgs []uuid.UUID) (map[uuid.UUID]changes.Key, error) {
	got, err := r.Log.LatestOf(ctx, orgs)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]changes.Key, len(got))
	for org, p := range got {
		out[org] = changes.Key{Commit: p.Commit, Prepare: p.Prepare}
	}
	return out, nil
}
