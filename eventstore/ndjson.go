package eventstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tidwall/gjson"
)

// The NDJSON form of the log: one event a line, in log order.
//
//	{"position":{"commit":812,"prepare":1},"id":"…","stream":"newsfeed-…","revision":0,
//	 "type":"NewsFeedCreated","time":"2026-11-22T10:04:05.123456Z","organization":"…",
//	 "data":{…},"metadata":{…}}
//
// organization is the organizationId of the event's metadata (null for the
// events every organization shares: articles, calendar events). data and
// metadata are the stored JSON as Postgres renders it.

// ExportFilter selects what Export writes. The zero value selects every
// event.
type ExportFilter struct {
	// Types keeps events of these stored names; empty keeps every type.
	Types []string
	// StreamPrefix keeps events of streams whose id starts with it.
	StreamPrefix string
	// Organization keeps events recorded for this organization.
	Organization uuid.UUID
	// Since and Until bound the recording time, [Since, Until); a zero
	// time is no bound.
	Since, Until time.Time
	// After starts the export strictly after this position.
	After Position
}

// ExportProgress is how far an export or import has got.
type ExportProgress struct {
	Events int64
	// Last is the position of the last event written (export) or read
	// from the file (import).
	Last Position
}

// ProgressFunc is told how far a long export or import has got, from the
// goroutine doing it, about once per 16,384 events and at the end.
type ProgressFunc func(ExportProgress)

const progressEvery = 1 << 14

// The server sends numbers, the id and the time in binary, which costs it
// less than rendering them (the line is written in Go), and the rest as
// text, whose bytes go into the line as they come: rendering jsonb is
// most of what an export costs the server. The fence is ReadAll's: an
// export ends where a reader could be sure nothing commits before it, so
// exporting again from its last position skips nothing. ORDER BY names the
// columns with their table: unqualified, transaction_id would be the
// bigint output column, which the primary key cannot serve.
const exportSQL = `
SELECT transaction_id::text::bigint, global_position, event_id, stream_id, stream_revision, event_type, recorded_at,
    metadata->>'organizationId', data::text, metadata::text
FROM events
WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
  AND transaction_id < (SELECT pg_snapshot_xmin(pg_current_snapshot()))
  AND (cardinality($3::text[]) = 0 OR event_type = ANY($3::text[]))
  AND ($4::text = '' OR starts_with(stream_id, $4::text))
  AND ($5::text = '' OR metadata->>'organizationId' = $5::text)
  AND ($6::timestamptz IS NULL OR recorded_at >= $6::timestamptz)
  AND ($7::timestamptz IS NULL OR recorded_at < $7::timestamptz)
ORDER BY events.transaction_id, events.global_position`

// exportFormats are the formats exportSQL's columns must come in for
// appendEventLine; text is the same in both (anyFormat).
const anyFormat = -1

var exportFormats = []int16{
	pgx.BinaryFormatCode, pgx.BinaryFormatCode, pgx.BinaryFormatCode, anyFormat, pgx.BinaryFormatCode,
	anyFormat, pgx.BinaryFormatCode, anyFormat, anyFormat, anyFormat,
}

// Export writes the events f selects to w as NDJSON, in log order, and
// returns how many it wrote and the position of the last. It reads in one
// query (one snapshot), streamed: memory does not grow with the log.
func (s *Postgres) Export(ctx context.Context, w io.Writer, f ExportFilter, progress ProgressFunc) (ExportProgress, error) {
	org := ""
	if f.Organization != uuid.Nil {
		org = f.Organization.String()
	}
	types := f.Types
	if types == nil {
		types = []string{}
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return ExportProgress{}, fmt.Errorf("export events: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only: nothing to keep
	// Walk the primary key, which is log order. For a large part of the
	// log the planner would rather sort a sequential scan: a gigabyte of
	// temporary files per million events before the first line.
	if _, err := tx.Exec(ctx, "SET LOCAL enable_sort = off"); err != nil {
		return ExportProgress{}, fmt.Errorf("export events: %w", err)
	}
	rows, err := tx.Query(ctx, exportSQL,
		strconv.FormatUint(f.After.Commit, 10), int64(min(f.After.Prepare, uint64(1<<63-1))),
		types, f.StreamPrefix, org, timeOrNil(f.Since), timeOrNil(f.Until))
	if err != nil {
		return ExportProgress{}, fmt.Errorf("export events: %w", err)
	}
	defer rows.Close()

	if err := checkFormats(rows.FieldDescriptions()); err != nil {
		return ExportProgress{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var (
		done ExportProgress
		line []byte
	)
	for rows.Next() {
		v := rows.RawValues()
		if line, err = appendEventLine(line[:0], v); err != nil {
			return done, fmt.Errorf("export events after %d: %w", done.Events, err)
		}
		if _, err := bw.Write(line); err != nil {
			return done, fmt.Errorf("export events: write: %w", err)
		}
		done.Events++
		done.Last = Position{Commit: binary.BigEndian.Uint64(v[0]), Prepare: binary.BigEndian.Uint64(v[1])}
		if progress != nil && done.Events%progressEvery == 0 {
			progress(done)
		}
	}
	if err := rows.Err(); err != nil {
		return done, fmt.Errorf("export events after %d: %w", done.Events, err)
	}
	if err := bw.Flush(); err != nil {
		return done, fmt.Errorf("export events: write: %w", err)
	}
	if progress != nil {
		progress(done)
	}
	return done, nil
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// checkFormats makes sure the server sends exportSQL's columns as
// appendEventLine reads them.
func checkFormats(fields []pgconn.FieldDescription) error {
	if len(fields) != len(exportFormats) {
		return fmt.Errorf("export events: %d columns, want %d", len(fields), len(exportFormats))
	}
	for i, f := range fields {
		if exportFormats[i] != anyFormat && f.Format != exportFormats[i] {
			return fmt.Errorf("export events: column %s comes in format %d, want %d", f.Name, f.Format, exportFormats[i])
		}
	}
	return nil
}

// pgEpoch is where Postgres counts binary timestamps from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// appendEventLine renders one row of exportSQL: binary int8, int8, uuid,
// text, int8, text, timestamptz, text (or NULL), text, text.
func appendEventLine(b []byte, v [][]byte) ([]byte, error) {
	if len(v[0]) != 8 || len(v[1]) != 8 || len(v[2]) != 16 || len(v[4]) != 8 || len(v[6]) != 8 {
		return b, errors.New("a row of unexpected shape")
	}
	b = append(b, `{"position":{"commit":`...)
	b = strconv.AppendUint(b, binary.BigEndian.Uint64(v[0]), 10)
	b = append(b, `,"prepare":`...)
	b = strconv.AppendUint(b, binary.BigEndian.Uint64(v[1]), 10)
	b = append(b, `},"id":"`...)
	b = appendUUID(b, v[2])
	b = append(b, `","stream":`...)
	b = appendJSONString(b, v[3])
	b = append(b, `,"revision":`...)
	b = strconv.AppendInt(b, int64(binary.BigEndian.Uint64(v[4])), 10)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, v[5])
	b = append(b, `,"time":"`...)
	at := pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(v[6]))) * time.Microsecond)
	b = at.AppendFormat(b, "2006-01-02T15:04:05.000000Z")
	b = append(b, `","organization":`...)
	if v[7] == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, v[7])
	}
	b = append(b, `,"data":`...)
	b = append(b, v[8]...)
	b = append(b, `,"metadata":`...)
	b = append(b, v[9]...)
	return append(b, "}\n"...), nil
}

// appendUUID writes a binary uuid in its canonical text form.
func appendUUID(b, id []byte) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], id[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], id[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], id[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], id[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], id[10:16])
	return append(b, buf[:]...)
}

// appendJSONString quotes s as a JSON string. Postgres text is valid
// UTF-8, so only quotes, backslashes and control characters need escapes.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// ErrStoreNotEmpty is the error of an import into a store that already
// holds events.
var ErrStoreNotEmpty = errors.New("the event store already holds events; import loads a log into an empty store only (use a new database)")

// ErrNotAWholeLog is the error of an import whose streams do not each
// start at revision 0 and go on without a gap (a filtered export, say):
// commands could not append to such streams.
var ErrNotAWholeLog = errors.New("the file is not a whole log")

// maxImportLine bounds one line of an import file.
const maxImportLine = 64 << 20

// Import loads an NDJSON export into the store, which must hold no events
// (ErrStoreNotEmpty otherwise). Events keep their ids, streams, revisions,
// types, data, metadata and recording times, and their order: they are
// appended in file order, which must be log order (positions ascending).
// Their positions are new ones of this store. It is one transaction: a
// file that fails anywhere (a malformed line, a duplicate id, a stream
// that does not start at revision 0 or has a gap) leaves the store empty.
// Concurrent appends wait until it ends.
func (s *Postgres) Import(ctx context.Context, r io.Reader, progress ProgressFunc) (int64, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("import events: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	// Appends take ROW EXCLUSIVE, which this mode conflicts with; readers
	// go on.
	if _, err := tx.Exec(ctx, "LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return 0, fmt.Errorf("import events: lock the log: %w", err)
	}
	var empty bool
	if err := tx.QueryRow(ctx, "SELECT NOT EXISTS (SELECT 1 FROM events)").Scan(&empty); err != nil {
		return 0, fmt.Errorf("import events: %w", err)
	}
	if !empty {
		return 0, ErrStoreNotEmpty
	}
	src := &importSource{lines: bufio.NewReaderSize(r, 1<<20), progress: progress}
	// global_position is left to its identity: COPY inserts in file order,
	// one transaction id for all, so the log order is the file's.
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"events"},
		[]string{"stream_id", "stream_revision", "event_id", "event_type", "data", "metadata", "recorded_at"}, src)
	if src.err != nil {
		return 0, fmt.Errorf("import events: %w", src.err)
	}
	if err != nil {
		return 0, fmt.Errorf("import events: line %d or before: %w", src.line, err)
	}
	if err := checkWholeStreams(ctx, tx); err != nil {
		return 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("import events: commit: %w", err)
	}
	if progress != nil {
		progress(ExportProgress{Events: n, Last: src.last})
	}
	return n, nil
}

// checkWholeStreams makes sure every stream's revisions are 0, 1, 2, … in
// log order, as appends leave them: every event after a stream's first
// follows its predecessor (the unique index finds it), so each stream is
// a chain down to revision 0. The file's own order (positions ascending)
// is checked as it is read.
func checkWholeStreams(ctx context.Context, tx pgx.Tx) error {
	var stream string
	var rev int64
	err := tx.QueryRow(ctx, `SELECT e.stream_id, e.stream_revision FROM events AS e
		WHERE e.stream_revision > 0 AND NOT EXISTS (
			SELECT 1 FROM events AS p
			WHERE p.stream_id = e.stream_id AND p.stream_revision = e.stream_revision - 1 AND p.global_position < e.global_position)
		LIMIT 1`).Scan(&stream, &rev)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("import events: check streams: %w", err)
	}
	return fmt.Errorf("import events: stream %s has revision %d without revision %d before it (an export filtered by type, stream, organization, time or position holds parts of streams): %w",
		stream, rev, rev-1, ErrNotAWholeLog)
}

// importSource feeds COPY from the file, one line at a time.
type importSource struct {
	lines    *bufio.Reader
	progress ProgressFunc
	line     int64
	count    int64
	last     Position
	row      []any
	err      error
}

func (s *importSource) Next() bool {
	for {
		raw, err := readLine(s.lines)
		if err == io.EOF && len(raw) == 0 {
			return false
		}
		if err != nil && err != io.EOF {
			s.err = fmt.Errorf("read line %d: %w", s.line+1, err)
			return false
		}
		s.line++
		if len(trimSpace(raw)) == 0 {
			continue
		}
		if s.err = s.parse(raw); s.err != nil {
			return false
		}
		s.count++
		if s.progress != nil && s.count%progressEvery == 0 {
			s.progress(ExportProgress{Events: s.count, Last: s.last})
		}
		return true
	}
}

// parse reads one line. gjson walks the line once, without reflection:
// encoding/json took three times the CPU of the COPY it feeds. data and
// metadata are passed on as they are; Postgres parses them into jsonb
// (and refuses what is not JSON).
func (s *importSource) parse(raw []byte) error {
	if !utf8.Valid(raw) || !gjson.ValidBytes(raw) {
		return fmt.Errorf("line %d: not a JSON object", s.line)
	}
	line := gjson.ParseBytes(raw)
	if !line.IsObject() {
		return fmt.Errorf("line %d: not a JSON object", s.line)
	}
	var (
		e    importedEvent
		err  error
		have uint
	)
	line.ForEach(func(k, v gjson.Result) bool {
		if i := slices.Index(lineMembers, k.Str); i >= 0 {
			have |= 1 << i
		}
		err = e.set(k.Str, v)
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("line %d: %w", s.line, err)
	}
	for i, k := range lineMembers {
		if have&(1<<i) == 0 {
			return fmt.Errorf("line %d: no %s", s.line, strings.Replace(k, "id", "event id", 1))
		}
	}
	if s.count > 0 && !s.last.Less(e.position) {
		return fmt.Errorf("line %d: position %s does not follow %s: the file is not in log order", s.line, e.position, s.last)
	}
	s.last = e.position
	s.row = []any{e.stream, e.revision, e.id, e.typ, e.data, e.metadata, e.time}
	return nil
}

// lineMembers are the members every line must have.
var lineMembers = []string{"position", "id", "stream", "revision", "type", "time", "data", "metadata"}

// importedEvent is one line as Import reads it.
type importedEvent struct {
	position       Position
	id             uuid.UUID
	stream, typ    string
	revision       int64
	time           time.Time
	data, metadata json.RawMessage
}

// set reads the member k of a line; members it does not know are left
// alone, so that a later export may add some.
func (e *importedEvent) set(k string, v gjson.Result) error {
	var err error
	switch k {
	case "position":
		have := 0
		v.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "commit":
				e.position.Commit, err = strconv.ParseUint(v.Raw, 10, 64)
				have++
			case "prepare":
				e.position.Prepare, err = strconv.ParseUint(v.Raw, 10, 64)
				have++
			}
			return err == nil
		})
		if err != nil || have != 2 {
			return errors.New("position must be {commit, prepare}, whole numbers")
		}
	case "id":
		if e.id, err = uuid.Parse(v.Str); err != nil || v.Type != gjson.String || e.id == uuid.Nil {
			return errors.New("no event id")
		}
	case "stream", "type":
		if v.Type != gjson.String || v.Str == "" {
			return fmt.Errorf("no %s", k)
		}
		if k == "stream" {
			e.stream = v.Str
		} else {
			e.typ = v.Str
		}
	case "revision":
		if e.revision, err = strconv.ParseInt(v.Raw, 10, 64); err != nil || e.revision < 0 {
			return errors.New("revision must be a whole number")
		}
	case "time":
		if e.time, err = time.Parse(time.RFC3339Nano, v.Str); err != nil || v.Type != gjson.String {
			return errors.New("time must be RFC 3339")
		}
	case "data", "metadata":
		if !v.IsObject() {
			return fmt.Errorf("%s must be a JSON object", k)
		}
		if k == "data" {
			e.data = json.RawMessage(v.Raw)
		} else {
			e.metadata = json.RawMessage(v.Raw)
		}
	}
	return nil
}

func (s *importSource) Values() ([]any, error) { return s.row, nil }
func (s *importSource) Err() error             { return s.err }

// readLine returns the next line without its newline, however long (up to
// maxImportLine).
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := append([]byte(nil), line...)
	for {
		line, err = r.ReadSlice('\n')
		long = append(long, line...)
		if len(long) > maxImportLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxImportLine)
		}
		switch {
		case err == nil:
			return long[:len(long)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return long, err
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}
