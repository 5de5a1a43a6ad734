package eventstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
)

// exportLine is what a test reads back from an export.
type exportLine struct {
	Position struct {
		Commit  uint64 `json:"commit"`
		Prepare uint64 `json:"prepare"`
	} `json:"position"`
	ID           uuid.UUID       `json:"id"`
	Stream       string          `json:"stream"`
	Revision     uint64          `json:"revision"`
	Type         string          `json:"type"`
	Time         time.Time       `json:"time"`
	Organization *string         `json:"organization"`
	Data         json.RawMessage `json:"data"`
	Metadata     json.RawMessage `json:"metadata"`
}

// parseExport checks an export's header and trailer lines and returns its
// event lines.
func parseExport(t *testing.T, b []byte) []exportLine {
	t.Helper()
	var out []exportLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	var raw [][]byte
	for sc.Scan() {
		raw = append(raw, slices.Clone(sc.Bytes()))
	}
	if len(raw) < 2 || !bytes.HasPrefix(raw[0], []byte(`{"feedsvcExport":{"version":2,`)) ||
		!bytes.HasPrefix(raw[len(raw)-1], []byte(`{"feedsvcExportEnd":{"events":`)) {
		t.Fatalf("the export lacks its header or trailer:\n%s", b)
	}
	for _, line := range raw[1 : len(raw)-1] {
		var l exportLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %q is not an event: %v", line, err)
		}
		out = append(out, l)
	}
	return out
}

func exportAll(t *testing.T, s *eventstore.Postgres, f eventstore.ExportFilter) ([]exportLine, []byte) {
	t.Helper()
	var buf bytes.Buffer
	done, err := s.Export(context.Background(), &buf, f, nil)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	lines := parseExport(t, buf.Bytes())
	if int(done.Events) != len(lines) {
		t.Fatalf("export reported %d events and wrote %d lines", done.Events, len(lines))
	}
	if len(lines) > 0 {
		last := lines[len(lines)-1].Position
		if done.Last != (eventstore.Position{Commit: last.Commit, Prepare: last.Prepare}) {
			t.Fatalf("export reported last position %s, its last line has %d/%d", done.Last, last.Commit, last.Prepare)
		}
	}
	return lines, buf.Bytes()
}

// orgEvent is an event recorded for org, as commands record them.
func orgEvent(typ string, org uuid.UUID, data string) eventstore.EventData {
	meta := fmt.Sprintf(`{"schemaVersion":1,"organizationId":%q}`, org)
	if org == uuid.Nil {
		meta = `{"schemaVersion":1}`
	}
	return eventstore.EventData{ID: uuid.New(), Type: typ, Data: []byte(data), Metadata: []byte(meta)}
}

// seedLog appends a small log of two organizations and a shared stream;
// some data needs escaping when quoted.
func seedLog(t *testing.T, s *eventstore.Postgres) (orgA, orgB uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	orgA, orgB = uuid.New(), uuid.New()
	appends := []struct {
		stream string
		events []eventstore.EventData
	}{
		{"newsfeed-a", []eventstore.EventData{orgEvent("NewsFeedCreated", orgA, `{"name":"A \"quoted\" \\ name\n","emoji":"📰"}`), orgEvent("NewsFeedRenamed", orgA, `{"name":"A2"}`)}},
		{"newsfeed-b", []eventstore.EventData{orgEvent("NewsFeedCreated", orgB, `{"name":"B"}`)}},
		{"article-x", []eventstore.EventData{orgEvent("ArticleDiscovered", uuid.Nil, `{"url":"https://example.com/x"}`)}},
		{"newsitem-a-x", []eventstore.EventData{orgEvent("NewsItemAdded", orgA, `{"n":1}`), orgEvent("FeedbackGiven", orgA, `{"rating":"positive"}`)}},
		{"newsfeed-a", []eventstore.EventData{orgEvent("NewsFeedDescribed", orgA, `{"description":"d"}`)}},
		// Positions past 9 in one transaction: text order is not log order.
		{"webhook-b", slices.Repeat([]eventstore.EventData{{}}, 12)},
	}
	for _, a := range appends {
		for i, e := range a.events {
			if e.Type == "" {
				a.events[i] = orgEvent("WebhookChanged", orgB, fmt.Sprintf(`{"n":%d}`, i))
			}
		}
		if _, err := s.AppendToStream(ctx, a.stream, eventstore.Any(), a.events...); err != nil {
			t.Fatal(err)
		}
	}
	// Exports stop at the fence as reads do.
	storetest.ReadAllVisible(t, s, eventstore.Start, 19)
	return orgA, orgB
}

func TestAnExportWritesEveryEventAsOneLineInLogOrder(t *testing.T) {
	s, _, _ := newStore(t)
	orgA, _ := seedLog(t, s)
	stored, err := s.ReadAll(context.Background(), eventstore.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines, raw := exportAll(t, s, eventstore.ExportFilter{})
	if len(lines) != len(stored) || len(stored) != 19 {
		t.Fatalf("exported %d lines for %d stored events (want 19)", len(lines), len(stored))
	}
	if !bytes.HasSuffix(raw, []byte("}\n")) {
		t.Fatalf("the export does not end with a complete line: %q", raw[max(0, len(raw)-20):])
	}
	for i, e := range stored {
		l := lines[i]
		got := fmt.Sprintf("%d/%d %s %s %d %s", l.Position.Commit, l.Position.Prepare, l.ID, l.Stream, l.Revision, l.Type)
		want := fmt.Sprintf("%s %s %s %d %s", e.Position, e.ID, e.StreamID, e.Revision, e.Type)
		if got != want {
			t.Fatalf("line %d is %s, want %s", i, got, want)
		}
		if !l.Time.Equal(e.RecordedAt) {
			t.Fatalf("line %d time %s, recorded %s", i, l.Time, e.RecordedAt)
		}
		if !jsonEqual(t, l.Data, e.Data) || !jsonEqual(t, l.Metadata, e.Metadata) {
			t.Fatalf("line %d data %s metadata %s, stored %s %s", i, l.Data, l.Metadata, e.Data, e.Metadata)
		}
	}
	if org := lines[0].Organization; org == nil || *org != orgA.String() {
		t.Fatalf("first line's organization %v, want %s", org, orgA)
	}
	if lines[3].Type != "ArticleDiscovered" || lines[3].Organization != nil {
		t.Fatalf("a shared event has organization %v, want null", lines[3].Organization)
	}
}

// An export reads in one snapshot. A write in another database that
// began before the log's events and ends just after the export's snapshot
// was taken is listed running by the snapshot and ended by the time the
// fence is read: the fence cannot tell whether it appended and stops
// there. The export takes a new snapshot rather than write none of the
// events (CI saw an export of a log of twelve events come out empty).
func TestAnExportIsNotCutShortByAWriteElsewhereThatEndsAsItStarts(t *testing.T) {
	s, _, _ := newStore(t)
	release := holdWrite(t, s, storetest.AnotherDatabase)
	seedLog(t, s)
	var snapshots int
	eventstore.OnExportSnapshot(t, func() {
		snapshots++
		if snapshots == 1 {
			if err := release(); err != nil {
				t.Error(err)
			}
		}
	})
	lines, _ := exportAll(t, s, eventstore.ExportFilter{})
	if len(lines) != 19 {
		t.Fatalf("the export wrote %d of the 19 events", len(lines))
	}
	if snapshots != 2 {
		t.Fatalf("the export took %d snapshots, want 2: the first one's fence stopped at the write that ended", snapshots)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

func TestExportFiltersSelectTheEventsTheyName(t *testing.T) {
	s, _, _ := newStore(t)
	orgA, orgB := seedLog(t, s)
	all, _ := exportAll(t, s, eventstore.ExportFilter{})
	third := eventstore.Position{Commit: all[2].Position.Commit, Prepare: all[2].Position.Prepare}
	cases := []struct {
		name   string
		filter eventstore.ExportFilter
		want   func(exportLine, int) bool
	}{
		{"no filter keeps every event", eventstore.ExportFilter{},
			func(exportLine, int) bool { return true }},
		{"types keep the events of those types", eventstore.ExportFilter{Types: []string{"NewsFeedCreated", "FeedbackGiven"}},
			func(l exportLine, _ int) bool { return l.Type == "NewsFeedCreated" || l.Type == "FeedbackGiven" }},
		{"a stream prefix keeps the streams that start with it", eventstore.ExportFilter{StreamPrefix: "newsfeed-"},
			func(l exportLine, _ int) bool { return strings.HasPrefix(l.Stream, "newsfeed-") }},
		{"a prefix with LIKE wildcards matches them literally", eventstore.ExportFilter{StreamPrefix: "news%"},
			func(exportLine, int) bool { return false }},
		{"an organization keeps its events only", eventstore.ExportFilter{Organization: orgB},
			func(l exportLine, _ int) bool { return l.Organization != nil && *l.Organization == orgB.String() }},
		{"since is inclusive", eventstore.ExportFilter{Since: all[4].Time},
			func(l exportLine, _ int) bool { return !l.Time.Before(all[4].Time) }},
		{"until is exclusive", eventstore.ExportFilter{Until: all[4].Time},
			func(l exportLine, _ int) bool { return l.Time.Before(all[4].Time) }},
		{"a from position starts strictly after it", eventstore.ExportFilter{After: third},
			func(_ exportLine, i int) bool { return i > 2 }},
		{"filters combine", eventstore.ExportFilter{Organization: orgA, StreamPrefix: "newsfeed-", After: third},
			func(l exportLine, i int) bool {
				return i > 2 && strings.HasPrefix(l.Stream, "newsfeed-") && *l.Organization == orgA.String()
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []uuid.UUID
			for i, l := range all {
				if c.want(l, i) {
					want = append(want, l.ID)
				}
			}
			got, _ := exportAll(t, s, c.filter)
			var ids []uuid.UUID
			for _, l := range got {
				ids = append(ids, l.ID)
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("exported %v, want %v", ids, want)
			}
		})
	}
}

func TestAnImportIntoAnEmptyStoreKeepsIdsStreamsRevisionsTimesAndOrder(t *testing.T) {
	src, _, _ := newStore(t)
	seedLog(t, src)
	lines, raw := exportAll(t, src, eventstore.ExportFilter{})
	dst, _, _ := newStore(t)
	n, err := dst.Import(context.Background(), bytes.NewReader(raw), eventstore.ImportOptions{SealKey: sealKeyOf(t, src)})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	storetest.ReadAllVisible(t, dst, eventstore.Start, len(lines))
	if int(n.Events) != len(lines) {
		t.Fatalf("imported %d events of %d", n.Events, len(lines))
	}
	again, _ := exportAll(t, dst, eventstore.ExportFilter{})
	for i := range lines {
		a, b := lines[i], again[i]
		a.Position, b.Position = b.Position, a.Position // positions are the new store's
		if fmt.Sprint(a.ID, a.Stream, a.Revision, a.Type, a.Time.UnixMicro(), a.Organization != nil) !=
			fmt.Sprint(b.ID, b.Stream, b.Revision, b.Type, b.Time.UnixMicro(), b.Organization != nil) ||
			!bytes.Equal(a.Data, b.Data) || !bytes.Equal(a.Metadata, b.Metadata) {
			t.Fatalf("line %d changed in the round trip:\n%+v\n%+v", i, lines[i], again[i])
		}
	}
	// The imported streams take appends where they left off.
	res, err := dst.AppendToStream(context.Background(), "newsfeed-a", eventstore.Exact(2), orgEvent("NewsFeedRenamed", uuid.New(), `{}`))
	if err != nil || res.NextExpectedRevision != 3 {
		t.Fatalf("append after the import: %v (revision %d)", err, res.NextExpectedRevision)
	}
}

// signed makes an export file of the event lines given, with a header and
// trailer that match them (as a careful forger would), so that a test
// reaches the checks behind the checksum.
func signed(t *testing.T, header []byte, events ...[]byte) []byte {
	t.Helper()
	var h map[string]map[string]any
	if err := json.Unmarshal(header, &h); err != nil {
		t.Fatal(err)
	}
	first, last := any(nil), any(nil)
	if len(events) > 0 {
		first, last = gjsonPosition(t, events[0]), gjsonPosition(t, events[len(events)-1])
	}
	h["feedsvcExport"]["first"], h["feedsvcExport"]["last"] = first, last
	head, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	file := slices.Concat(append(head, '\n'), bytes.Join(events, nil))
	sum := sha256.Sum256(file)
	return fmt.Appendf(file, `{"feedsvcExportEnd":{"events":%d,"sha256":"%x"}}`+"\n", len(events), sum)
}

func gjsonPosition(t *testing.T, line []byte) any {
	t.Helper()
	var l struct{ Position any }
	if err := json.Unmarshal(line, &l); err != nil {
		t.Fatal(err)
	}
	return l.Position
}

func TestAnImportIsRefusedAndChangesNothingWhen(t *testing.T) {
	src, _, _ := newStore(t)
	seedLog(t, src)
	parsed, whole := exportAll(t, src, eventstore.ExportFilter{})
	_, typed := exportAll(t, src, eventstore.ExportFilter{Types: []string{"NewsFeedRenamed"}})
	all := bytes.SplitAfter(whole, []byte("\n"))
	head, lines, tail := all[0], all[1:len(all)-2], all[len(all)-2] // the split leaves an empty last piece
	swapped := signed(t, head, slices.Concat([][]byte{lines[1], lines[0]}, lines[2:])...)
	revisionsSwapped := signed(t, head, slices.Concat([][]byte{
		bytes.Replace(lines[0], []byte(`"revision":0`), []byte(`"revision":1`), 1),
		bytes.Replace(lines[1], []byte(`"revision":1`), []byte(`"revision":0`), 1)},
		lines[2:])...)
	sameID := signed(t, head, lines[0], bytes.Replace(lines[1], []byte(parsed[1].ID.String()), []byte(parsed[0].ID.String()), 1))
	changed := bytes.Replace(lines[18], []byte(`"n": 11`), []byte(`"n": 12`), 1)
	if bytes.Equal(changed, lines[18]) {
		t.Fatalf("the last line %s has no n of 11 to change", lines[18])
	}
	cases := []struct {
		name    string
		prepare func(t *testing.T, s *eventstore.Postgres)
		file    []byte
		opts    eventstore.ImportOptions
		want    error
		message string
	}{
		{name: "the store already holds events", file: whole, want: eventstore.ErrStoreNotEmpty,
			prepare: func(t *testing.T, s *eventstore.Postgres) {
				if _, err := s.AppendToStream(context.Background(), "other", eventstore.NoStream(), orgEvent("X", uuid.Nil, `{}`)); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the file is empty", file: nil, want: eventstore.ErrNotAnExport, message: "empty"},
		{name: "the file has no header (format version 1)", file: bytes.Join(lines, nil), want: eventstore.ErrNotAnExport, message: "export the log again"},
		{name: "the file has no trailer", file: slices.Concat(head, bytes.Join(lines, nil)), want: eventstore.ErrIncomplete, message: "cut short"},
		{name: "the file lost a line", file: slices.Concat(head, bytes.Join(lines[:len(lines)-1], nil), tail), want: eventstore.ErrIncomplete, message: "counts 19 events, the file holds 18"},
		{name: "a line was changed", file: slices.Concat(head, bytes.Join(lines[:18], nil), changed, tail),
			want: eventstore.ErrIncomplete, message: "checksum"},
		{name: "a line follows the trailer", file: slices.Concat(whole, lines[0]), want: eventstore.ErrIncomplete, message: "follows the trailer"},
		{name: "the file is a filtered export", file: typed, want: eventstore.ErrPartialExport, message: `"types":["NewsFeedRenamed"]`},
		{name: "an event's type is unknown", file: whole, opts: eventstore.ImportOptions{KnownType: func(t string) bool { return t != "FeedbackGiven" }},
			want: eventstore.ErrUnknownEventType, message: `"FeedbackGiven"`},
		{name: "the file is not in log order", file: swapped, message: "not in log order"},
		{name: "a stream's revisions are not in log order", file: revisionsSwapped, want: eventstore.ErrNotAWholeLog},
		{name: "a stream lacks a revision", file: signed(t, head, slices.Concat(lines[:1], lines[2:])...), want: eventstore.ErrNotAWholeLog, message: "revision 2 without revision 1"},
		{name: "a line is not JSON", file: signed(t, head, lines[0], []byte("{oops\n"), lines[1]), message: "line 3"},
		{name: "a line has no event id", file: signed(t, head, bytes.Replace(lines[0], []byte(`"id":"`), []byte(`"xid":"`), 1)), message: "no event id"},
		{name: "a line repeats the one before", file: signed(t, head, lines[0], lines[0]), message: "not in log order"},
		{name: "an event id appears twice", file: sameID, message: "events_event_id_key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst, db, _ := newStore(t)
			if c.prepare != nil {
				c.prepare(t, dst)
			}
			var before int
			if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM events").Scan(&before); err != nil {
				t.Fatal(err)
			}
			// These files are refused for what lies behind the seal:
			// the forged ones have none, so it is not asked for.
			opts := c.opts
			opts.Unverified = true
			_, err := dst.Import(context.Background(), bytes.NewReader(c.file), opts)
			if err == nil {
				t.Fatal("the import succeeded")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.message) {
				t.Fatalf("error %q does not say %q", err, c.message)
			}
			var after int
			if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM events").Scan(&after); err != nil {
				t.Fatal(err)
			}
			if after != before {
				t.Fatalf("the refused import left %d events (had %d)", after, before)
			}
		})
	}
}
