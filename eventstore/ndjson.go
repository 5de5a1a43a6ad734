package eventstore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
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

	"github.com/feedsvc/feedsvc/internal/uuidtext"
)

// The NDJSON form of the log (format version 2): a header line, one event
// a line in log order, and a trailer line.
//
//	{"feedsvcExport":{"version":2,"store":"…","exportedAt":"…","partial":false,"filters":{},
//	 "first":{"commit":812,"prepare":1},"last":{"commit":9051,"prepare":8001}}}
//	{"position":{"commit":812,"prepare":1},"id":"…","stream":"newsfeed-…","revision":0,
//	 "type":"NewsFeedCreated","time":"2026-11-22T10:04:05.123456Z","organization":"…",
//	 "data":{…},"metadata":{…}}
//	…
//	{"feedsvcExportEnd":{"events":8001,"sha256":"…","seal":{"alg":"HMAC-SHA256","key":"…","mac":"…"}}}
//
// organization is the organizationId of the event's metadata (null for the
// events every organization shares: articles, calendar events). data and
// metadata are the stored JSON as Postgres renders it. The header names
// the store, the filters and the first and last position exported; the
// trailer counts the events and holds the SHA-256 of every byte before it
// (the header and the event lines), so that an import can tell a whole
// file from one cut short, edited or missing a line, and the seal (seal.go)
// that shows the file came from the installation whose key made it: the
// checksum alone can be computed again by whoever edits the file. Version
// 1 files, the event lines alone, cannot prove either and are not read.

// ExportVersion is the version of the format Export writes and Import
// reads.
const ExportVersion = 2

// ExportHeader is an export's first line.
type ExportHeader struct {
	Version    int       `json:"version"`
	Store      uuid.UUID `json:"store"`
	ExportedAt time.Time `json:"exportedAt"`
	// Partial: the file is not the whole log (filters were used, or the
	// store itself holds a partial log).
	Partial bool          `json:"partial"`
	Filters headerFilters `json:"filters"`
	// First and Last are the positions of the first and last event
	// written; nil when none was.
	First *Position `json:"first"`
	Last  *Position `json:"last"`
}

// ExportTrailer is an export's last line.
type ExportTrailer struct {
	Events int64  `json:"events"`
	SHA256 string `json:"sha256"`
	// Seal is absent from files written before exports were sealed.
	Seal *ExportSeal `json:"seal,omitempty"`
}

// headerFilters are the filters an export used, as its header names them.
type headerFilters struct {
	Types        []string   `json:"types,omitempty"`
	StreamPrefix string     `json:"streamPrefix,omitempty"`
	Organization *uuid.UUID `json:"organization,omitempty"`
	Since        *time.Time `json:"since,omitempty"`
	Until        *time.Time `json:"until,omitempty"`
	After        *Position  `json:"after,omitempty"`
}

func (f ExportFilter) header() headerFilters {
	h := headerFilters{Types: f.Types, StreamPrefix: f.StreamPrefix, Since: timeOrNil(f.Since), Until: timeOrNil(f.Until)}
	if f.Organization != uuid.Nil {
		h.Organization = &f.Organization
	}
	if f.After != Start {
		h.After = &f.After
	}
	return h
}

func (h headerFilters) used() bool {
	return len(h.Types) > 0 || h.StreamPrefix != "" || h.Organization != nil || h.Since != nil || h.Until != nil || h.After != nil
}

// MarshalJSON writes a position as the event lines do.
func (p Position) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"commit":%d,"prepare":%d}`, p.Commit, p.Prepare), nil
}

// UnmarshalJSON reads a position as MarshalJSON writes it.
func (p *Position) UnmarshalJSON(b []byte) error {
	var v struct {
		Commit  *uint64 `json:"commit"`
		Prepare *uint64 `json:"prepare"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Commit == nil || v.Prepare == nil {
		return errors.New("position must be {commit, prepare}, whole numbers")
	}
	*p = Position{Commit: *v.Commit, Prepare: *v.Prepare}
	return nil
}

// The members naming an export's header and trailer lines.
const (
	headerMember  = "feedsvcExport"
	trailerMember = "feedsvcExportEnd"
)

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
// most of what an export costs the server. The fence ($8) is ReadAll's,
// read once in the export's snapshot (exportFenceSQL) so that the header
// and the events agree on it: an export ends where a reader could be sure
// nothing commits before it, so exporting again from its last position
// skips nothing. ORDER BY names the
// columns with their table: unqualified, transaction_id would be the
// bigint output column, which the primary key cannot serve.
const exportSQL = `
SELECT transaction_id::text::bigint, global_position, event_id, stream_id, stream_revision, event_type, recorded_at,
    metadata->>'organizationId', data::text, metadata::text
FROM events` + exportWhere + `
ORDER BY events.transaction_id, events.global_position`

const exportWhere = `
WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
  AND transaction_id < $8::text::xid8
  AND (cardinality($3::text[]) = 0 OR event_type = ANY($3::text[]))
  AND ($4::text = '' OR starts_with(stream_id, $4::text))
  AND ($5::text = '' OR metadata->>'organizationId' = $5::text)
  AND ($6::timestamptz IS NULL OR recorded_at >= $6::timestamptz)
  AND ($7::timestamptz IS NULL OR recorded_at < $7::timestamptz)`

// exportFenceSQL reads the fence in the export's snapshot and whether it
// is settled: at the snapshot's xmax, or at a transaction still running
// (an appender the export must stop before). A fence at a transaction that
// has ended since the snapshot was taken is not settled: the snapshot
// listed it as running, and the fence cannot tell whether it appended, so
// it stops there; in a repeatable-read export that would hold for the
// whole export, however long ago the transaction ended (a long write in
// another database that ends at the wrong moment, and the export is
// empty). CASE keeps pg_xact_status from being asked about the xmax,
// which is in the future.
const exportFenceSQL = `
SELECT f::text, CASE WHEN f = pg_snapshot_xmax(pg_current_snapshot()) THEN true
                     ELSE pg_xact_status(f) = 'in progress' END
FROM (SELECT ` + fenceSQL + ` AS f) AS fence`

// exportSnapshotTaken runs between the export's snapshot and its fence;
// the tests end a transaction there.
var exportSnapshotTaken = func() {}

// exportTries bounds how often an export takes a new snapshot for a
// fence that is not settled. A fresh snapshot no longer lists the
// transaction that ended, so one more is nearly always enough.
const exportTries = 5

// beginExport opens the export's read-only repeatable-read transaction
// and reads its fence, taking a new snapshot while the fence is not
// settled (exportFenceSQL). The header's first and last position and the
// events then come from one snapshot and one fence. Past exportTries the
// export goes on with the fence it has: it is safe (it skips nothing and
// an export from its last position continues it), only shorter.
func (s *Postgres) beginExport(ctx context.Context) (pgx.Tx, string, error) {
	for try := 1; ; try++ {
		tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead})
		if err != nil {
			return nil, "", fmt.Errorf("export events: %w", err)
		}
		fence, settled, err := exportFence(ctx, tx)
		if err != nil || settled || try == exportTries {
			if err != nil {
				tx.Rollback(ctx) //nolint:errcheck // read only: nothing to keep
				return nil, "", err
			}
			return tx, fence, nil
		}
		if err := tx.Rollback(ctx); err != nil {
			return nil, "", fmt.Errorf("export events: %w", err)
		}
	}
}

func exportFence(ctx context.Context, tx pgx.Tx) (fence string, settled bool, err error) {
	// Walk the primary key, which is log order. For a large part of the
	// log the planner would rather sort a sequential scan: a gigabyte of
	// temporary files per million events before the first line.
	if _, err := tx.Exec(ctx, "SET LOCAL enable_sort = off"); err != nil {
		return "", false, fmt.Errorf("export events: %w", err)
	}
	// The snapshot is taken by the first statement that reads.
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		return "", false, fmt.Errorf("export events: take the snapshot: %w", err)
	}
	exportSnapshotTaken()
	if err := tx.QueryRow(ctx, exportFenceSQL).Scan(&fence, &settled); err != nil {
		return "", false, fmt.Errorf("export events: read the log's fence: %w", err)
	}
	return fence, settled, nil
}

// exportEndsSQL finds the first and last event an export writes, for its
// header, in the export's snapshot: two walks of the primary key, one
// from each end (for a whole log, one index entry each).
const exportEndsSQL = `
SELECT (SELECT ARRAY[transaction_id::text::bigint, global_position] FROM events` + exportWhere + `
        ORDER BY events.transaction_id, events.global_position LIMIT 1),
       (SELECT ARRAY[transaction_id::text::bigint, global_position] FROM events` + exportWhere + `
        ORDER BY events.transaction_id DESC, events.global_position DESC LIMIT 1)`

// exportFormats are the formats exportSQL's columns must come in for
// appendEventLine; text is the same in both (anyFormat).
const anyFormat = -1

var exportFormats = []int16{
	pgx.BinaryFormatCode, pgx.BinaryFormatCode, pgx.BinaryFormatCode, anyFormat, pgx.BinaryFormatCode,
	anyFormat, pgx.BinaryFormatCode, anyFormat, anyFormat, anyFormat,
}

// Export writes the events f selects to w as NDJSON, in log order,
// between a header and a trailer, and returns how many it wrote and the
// position of the last. It reads in one snapshot, streamed: memory does
// not grow with the log.
func (s *Postgres) Export(ctx context.Context, w io.Writer, f ExportFilter, progress ProgressFunc) (ExportProgress, error) {
	id, err := s.Identity(ctx)
	if err != nil {
		return ExportProgress{}, fmt.Errorf("export events: %w", err)
	}
	key, err := s.SealKey(ctx)
	if err != nil {
		return ExportProgress{}, fmt.Errorf("export events: %w", err)
	}
	org := ""
	if f.Organization != uuid.Nil {
		org = f.Organization.String()
	}
	types := f.Types
	if types == nil {
		types = []string{}
	}
	tx, fence, err := s.beginExport(ctx)
	if err != nil {
		return ExportProgress{}, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only: nothing to keep
	args := []any{strconv.FormatUint(f.After.Commit, 10), int64(min(f.After.Prepare, uint64(1<<63-1))),
		types, f.StreamPrefix, org, timeOrNil(f.Since), timeOrNil(f.Until), fence}
	head := ExportHeader{Version: ExportVersion, Store: id.ID, ExportedAt: time.Now().UTC(), Filters: f.header()}
	head.Partial = head.Filters.used() || id.Partial != nil
	var first, last []int64
	if err := tx.QueryRow(ctx, exportEndsSQL, args...).Scan(&first, &last); err != nil {
		return ExportProgress{}, fmt.Errorf("export events: find the first and last: %w", err)
	}
	if len(first) == 2 && len(last) == 2 {
		head.First = &Position{Commit: uint64(first[0]), Prepare: uint64(first[1])}
		head.Last = &Position{Commit: uint64(last[0]), Prepare: uint64(last[1])}
	}
	headLine, err := json.Marshal(map[string]ExportHeader{headerMember: head})
	if err != nil {
		return ExportProgress{}, fmt.Errorf("export events: header: %w", err)
	}
	rows, err := tx.Query(ctx, exportSQL, args...)
	if err != nil {
		return ExportProgress{}, fmt.Errorf("export events: %w", err)
	}
	defer rows.Close()

	if err := checkFormats(rows.FieldDescriptions()); err != nil {
		return ExportProgress{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	sum := sha256.New()
	var (
		done ExportProgress
		line = append(headLine, '\n')
	)
	sum.Write(line)
	if _, err := bw.Write(line); err != nil {
		return done, fmt.Errorf("export events: write: %w", err)
	}
	for rows.Next() {
		v := rows.RawValues()
		if line, err = appendEventLine(line[:0], v); err != nil {
			return done, fmt.Errorf("export events after %d: %w", done.Events, err)
		}
		sum.Write(line)
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
	if (head.Last == nil) != (done.Events == 0) || (head.Last != nil && *head.Last != done.Last) {
		// Cannot happen in one snapshot; a file whose header lied would be
		// refused by every import.
		return done, fmt.Errorf("export events: the header's last position %v is not the last exported, %s", head.Last, done.Last)
	}
	digest := hex.EncodeToString(sum.Sum(nil))
	seal := key.seal(digest, done.Events)
	tail, err := json.Marshal(map[string]ExportTrailer{trailerMember: {Events: done.Events, SHA256: digest, Seal: &seal}})
	if err != nil {
		return done, fmt.Errorf("export events: trailer: %w", err)
	}
	if _, err := bw.Write(append(tail, '\n')); err != nil {
		return done, fmt.Errorf("export events: write: %w", err)
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
	b = uuidtext.Append(b, uuid.UUID(v[2]))
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

// ErrNotAnExport is the error of an import of a file that does not start
// with an export's header: empty, something else, or an export of format
// version 1, whose files cannot show whether they are whole.
var ErrNotAnExport = errors.New("the file is not an export of this format")

// ErrIncomplete is the error of an import of a file that lacks its
// trailer, or whose events do not match it: cut short, or changed.
var ErrIncomplete = errors.New("the file is not the whole export")

// ErrPartialExport is the error of an import, without ImportOptions.Partial,
// of an export made with filters.
var ErrPartialExport = errors.New("the file is a partial export")

// ErrUnknownEventType is the error of an import of an event whose type
// ImportOptions.KnownType does not know.
var ErrUnknownEventType = errors.New("unknown event type")

// maxImportLine bounds one line of an import file.
const maxImportLine = 64 << 20

// ImportOptions say what Import accepts and what it does before it commits.
type ImportOptions struct {
	// Partial accepts a partial export (made with filters): the store is
	// then marked partial, an analysis copy that CheckServable refuses,
	// and its streams are not checked for gaps.
	Partial bool
	// KnownType tells the event types the importer knows; nil knows every
	// type. An event of another type fails the import unless
	// AllowUnknownTypes.
	KnownType         func(string) bool
	AllowUnknownTypes bool
	// Mark is a position of the file (the positions its lines carry):
	// Imported.BeforeMark is where the last event before it lands.
	Mark *Position
	// SealKey checks the file's seal: the key of the installation that
	// exported it. Without it, the store's own key checks a file it
	// sealed; any other seal cannot be checked.
	SealKey SealKey
	// Unverified accepts a file whose seal cannot be checked (no key for
	// it) or that has none; a seal the key does not make is refused all
	// the same.
	Unverified bool
	// BeforeCommit runs in the import's transaction once the file is
	// loaded and checked: what it records commits with the events or not
	// at all.
	BeforeCommit func(ctx context.Context, tx pgx.Tx, done Imported) error
	Progress     ProgressFunc
}

// Imported is what an import loaded.
type Imported struct {
	Header ExportHeader
	Events int64
	// Last is the position in this store of the last event imported (Start
	// when none was).
	Last Position
	// BeforeMark is the position in this store of the last event the file
	// holds before ImportOptions.Mark (Start when none).
	BeforeMark Position
	// UnknownTypes counts the events of unknown types kept
	// (AllowUnknownTypes), by type.
	UnknownTypes map[string]int64
	// Seal is what the import found of the file's seal.
	Seal SealCheck
}

// Import loads an NDJSON export into the store, which must hold no events
// (ErrStoreNotEmpty otherwise). Events keep their ids, streams, revisions,
// types, data, metadata and recording times, and their order: they are
// appended in file order, which must be log order (positions ascending).
// Their positions are new ones of this store. The file must be whole: its
// header first (ErrNotAnExport), its trailer last with the count and
// checksum of what came before (ErrIncomplete), sealed by the key it is
// given or its own unless o.Unverified (ErrSealMismatch whatever o says;
// ErrSealNotChecked, ErrNotSealed), no filters unless
// o.Partial (ErrPartialExport), every stream starting at revision 0
// without a gap (ErrNotAWholeLog), known types (ErrUnknownEventType). It
// is one transaction: a file that fails anywhere leaves the store as it
// was. Concurrent appends wait until it ends.
func (s *Postgres) Import(ctx context.Context, r io.Reader, o ImportOptions) (Imported, error) {
	src := &importSource{lines: bufio.NewReaderSize(r, 1<<20), opts: o, sum: sha256.New(), unknown: map[string]int64{}}
	head, err := src.header()
	if err != nil {
		return Imported{}, fmt.Errorf("import events: %w", err)
	}
	if head.Partial && !o.Partial {
		return Imported{}, fmt.Errorf("import events: %w (filters %s): it lacks events of the log, so commands could not append to its streams; "+
			"export the whole log to move an installation, or import it with --partial for an analysis copy, which feedsvc serve refuses to run on", ErrPartialExport, filtersText(head))
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return Imported{}, fmt.Errorf("import events: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	// The log's fence lock first (see postgres.go), before anything gives
	// the transaction an id; then the table: appends take ROW EXCLUSIVE,
	// which this mode conflicts with; readers go on.
	if _, err := tx.Exec(ctx, beginAppendSQL); err != nil {
		return Imported{}, fmt.Errorf("import events: take the log's append lock: %w", err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return Imported{}, fmt.Errorf("import events: lock the log: %w", err)
	}
	var empty bool
	if err := tx.QueryRow(ctx, "SELECT NOT EXISTS (SELECT 1 FROM events)").Scan(&empty); err != nil {
		return Imported{}, fmt.Errorf("import events: %w", err)
	}
	if !empty {
		return Imported{}, ErrStoreNotEmpty
	}
	if src.own, err = storedSealKey(ctx, tx); err != nil {
		return Imported{}, fmt.Errorf("import events: %w", err)
	}
	// global_position is left to its identity: COPY inserts in file order,
	// one transaction id for all, so the log order is the file's.
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"events"},
		[]string{"stream_id", "stream_revision", "event_id", "event_type", "data", "metadata", "recorded_at"}, src)
	if src.err != nil {
		return Imported{}, fmt.Errorf("import events: %w", src.err)
	}
	if err != nil {
		return Imported{}, fmt.Errorf("import events: line %d or before: %w", src.line, err)
	}
	if !o.Partial {
		if err := checkWholeStreams(ctx, tx); err != nil {
			return Imported{}, err
		}
	}
	done := Imported{Header: head, Events: n, UnknownTypes: src.unknown, Seal: src.seal}
	if done.Last, err = positionOf(ctx, tx, src.lastID); err != nil {
		return Imported{}, err
	}
	if done.BeforeMark, err = positionOf(ctx, tx, src.beforeMarkID); err != nil {
		return Imported{}, err
	}
	var partial []byte
	if head.Partial {
		if partial, err = json.Marshal(head.Filters); err != nil {
			return Imported{}, fmt.Errorf("import events: %w", err)
		}
	}
	// A log whose seal the given key checked comes from the installation
	// that key belongs to, which goes on here: its key is this store's
	// from now on (a key the store had is replaced). Otherwise the store
	// keeps its own key, or makes one at its first export.
	var adopted []byte
	if src.seal.Verified && o.SealKey.Valid() {
		adopted = o.SealKey.secret
	}
	if _, err := tx.Exec(ctx, `INSERT INTO event_store (id, imported_from, imported_at, partial, seal_key, seal_key_made_at)
		VALUES (gen_random_uuid(), $1, now(), $2, $3::bytea, CASE WHEN $3::bytea IS NULL THEN NULL ELSE now() END)
		ON CONFLICT (one) DO UPDATE SET imported_from = EXCLUDED.imported_from, imported_at = EXCLUDED.imported_at, partial = EXCLUDED.partial,
			seal_key = COALESCE(EXCLUDED.seal_key, event_store.seal_key), seal_key_made_at = COALESCE(EXCLUDED.seal_key_made_at, event_store.seal_key_made_at)`,
		head.Store, partial, adopted); err != nil {
		return Imported{}, fmt.Errorf("import events: record where the log came from: %w", err)
	}
	if o.BeforeCommit != nil {
		if err := o.BeforeCommit(ctx, tx, done); err != nil {
			return Imported{}, fmt.Errorf("import events: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return Imported{}, fmt.Errorf("import events: commit: %w", err)
	}
	if o.Progress != nil {
		o.Progress(ExportProgress{Events: n, Last: src.last})
	}
	return done, nil
}

// filtersText is the filters of a header as a reader reads them.
func filtersText(h ExportHeader) string {
	if !h.Filters.used() {
		return "none; the store it came from holds a partial log"
	}
	b, _ := json.Marshal(h.Filters)
	return string(b)
}

// positionOf is where the event id landed in this store (Start for none).
func positionOf(ctx context.Context, tx pgx.Tx, id uuid.UUID) (Position, error) {
	if id == uuid.Nil {
		return Start, nil
	}
	var commit, prepare int64
	if err := tx.QueryRow(ctx, "SELECT transaction_id::text::bigint, global_position FROM events WHERE event_id = $1", id).
		Scan(&commit, &prepare); err != nil {
		return Start, fmt.Errorf("import events: find event %s: %w", id, err)
	}
	return Position{Commit: uint64(commit), Prepare: uint64(prepare)}, nil
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
	return fmt.Errorf("import events: stream %s has revision %d without revision %d before it (a line was removed, or the log it came from was partial): %w",
		stream, rev, rev-1, ErrNotAWholeLog)
}

// importSource feeds COPY from the file, one line at a time, and checks
// the file against its header and trailer as it goes.
type importSource struct {
	lines *bufio.Reader
	opts  ImportOptions
	head  ExportHeader
	sum   hash.Hash
	line  int64
	count int64
	first Position
	last  Position
	// lastID and beforeMarkID are the ids of the last event and of the
	// last before opts.Mark.
	lastID, beforeMarkID uuid.UUID
	unknown              map[string]int64
	// own is the store's seal key (the zero key when it has none); seal
	// what the trailer's seal turned out to be.
	own  SealKey
	seal SealCheck
	row  []any
	err  error
}

// next reads the next line with its number, counting it into the
// checksum; io.EOF at the end.
func (s *importSource) next() ([]byte, error) {
	raw, err := readLine(s.lines)
	if err == io.EOF && len(raw) == 0 {
		return nil, io.EOF
	}
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read line %d: %w", s.line+1, err)
	}
	s.line++
	return raw, nil
}

// header reads the file's first line, which must be a version 2 header.
func (s *importSource) header() (ExportHeader, error) {
	raw, err := s.next()
	if err == io.EOF {
		return ExportHeader{}, fmt.Errorf("%w: the file is empty (an export holds a header line and a trailer line even when it holds no events)", ErrNotAnExport)
	}
	if err != nil {
		return ExportHeader{}, err
	}
	s.hashLine(raw)
	var line struct {
		Header   *json.RawMessage `json:"feedsvcExport"`
		Position *json.RawMessage `json:"position"`
	}
	if json.Unmarshal(raw, &line) != nil || line.Header == nil {
		if line.Position != nil {
			return ExportHeader{}, fmt.Errorf("%w: it starts with an event, not a header: an export of format version 1 (before feedsvc wrote headers and trailers), which cannot show whether it is whole; export the log again with this feedsvc (feedsvc events export --out FILE)", ErrNotAnExport)
		}
		return ExportHeader{}, fmt.Errorf("%w: line 1 is not an export header", ErrNotAnExport)
	}
	var h ExportHeader
	if err := json.Unmarshal(*line.Header, &h); err != nil {
		return ExportHeader{}, fmt.Errorf("%w: line 1: the header is malformed: %v", ErrNotAnExport, err)
	}
	if h.Version != ExportVersion {
		return ExportHeader{}, fmt.Errorf("%w: the header says format version %d; this feedsvc reads version %d", ErrNotAnExport, h.Version, ExportVersion)
	}
	if h.Store == uuid.Nil || (h.First == nil) != (h.Last == nil) {
		return ExportHeader{}, fmt.Errorf("%w: line 1: the header lacks its store or has one of first and last without the other", ErrNotAnExport)
	}
	s.head = h
	return h, nil
}

// hashLine counts a line, with the newline the export wrote after it,
// into the checksum.
func (s *importSource) hashLine(raw []byte) {
	s.sum.Write(raw)
	s.sum.Write([]byte{'\n'})
}

func (s *importSource) Next() bool {
	for {
		raw, err := s.next()
		if err == io.EOF {
			s.err = fmt.Errorf("%w: it ends after line %d (%d events) without its trailer: it was cut short; export it again", ErrIncomplete, s.line, s.count)
			return false
		}
		if err != nil {
			s.err = err
			return false
		}
		if t, ok := trailer(raw); ok {
			s.err = s.end(t)
			return false
		}
		s.hashLine(raw)
		if s.err = s.parse(raw); s.err != nil {
			return false
		}
		s.count++
		if s.opts.Progress != nil && s.count%progressEvery == 0 {
			s.opts.Progress(ExportProgress{Events: s.count, Last: s.last})
		}
		return true
	}
}

// trailer reads raw as a trailer line, if it is one.
func trailer(raw []byte) (*ExportTrailer, bool) {
	if !gjson.GetBytes(raw, trailerMember).Exists() {
		return nil, false
	}
	var line struct {
		Trailer *ExportTrailer `json:"feedsvcExportEnd"`
	}
	if err := json.Unmarshal(raw, &line); err != nil || line.Trailer == nil {
		return &ExportTrailer{Events: -1}, true
	}
	return line.Trailer, true
}

// end checks the trailer against what was read, and that nothing follows
// it.
func (s *importSource) end(t *ExportTrailer) error {
	switch {
	case t.Events < 0:
		return fmt.Errorf("%w: line %d: the trailer is malformed", ErrIncomplete, s.line)
	case t.Events != s.count:
		return fmt.Errorf("%w: the trailer counts %d events, the file holds %d: lines were removed or added", ErrIncomplete, t.Events, s.count)
	case t.SHA256 != hex.EncodeToString(s.sum.Sum(nil)):
		return fmt.Errorf("%w: the checksum in the trailer does not match the file's lines: the file was changed after the export", ErrIncomplete)
	case s.count > 0 && (s.head.First == nil || *s.head.First != s.first || *s.head.Last != s.last):
		return fmt.Errorf("%w: the file's events run from %s to %s, its header says %v to %v", ErrIncomplete, s.first, s.last, s.head.First, s.head.Last)
	case s.count == 0 && s.head.First != nil:
		return fmt.Errorf("%w: the file holds no events, its header says %s to %s", ErrIncomplete, s.head.First, s.head.Last)
	}
	if err := s.checkSeal(t); err != nil {
		return err
	}
	for {
		raw, err := s.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(trimSpace(raw)) != 0 {
			return fmt.Errorf("%w: line %d follows the trailer", ErrIncomplete, s.line)
		}
	}
}

// checkSeal checks the trailer's seal, once the checksum has shown the
// file whole: with the key the import was given, else with the store's
// own when it made the seal. A seal that key does not make is refused; a
// file with no seal, or one no key here can check, only with
// opts.Unverified.
func (s *importSource) checkSeal(t *ExportTrailer) error {
	if t.Seal == nil {
		if !s.opts.Unverified {
			return fmt.Errorf("%w: it was exported by a feedsvc that did not seal its exports (or the seal was removed), so nothing shows it came from your installation; "+
				"export it again with this feedsvc, or import it as it is with --unverified", ErrNotSealed)
		}
		return nil
	}
	s.seal = SealCheck{Sealed: true, Key: t.Seal.Key}
	key := s.opts.SealKey
	if !key.Valid() && s.own.Valid() && s.own.ID() == t.Seal.Key {
		key = s.own
	}
	switch {
	case key.Valid() && key.ID() != t.Seal.Key:
		return fmt.Errorf("%w: it is sealed with seal key %s, and the key given is %s: give the key of the installation that exported it", ErrSealMismatch, t.Seal.Key, key.ID())
	case key.Valid() && !key.verifies(*t.Seal, t.SHA256, t.Events):
		return fmt.Errorf("%w: seal key %s did not make it: the file was changed after its export and its checksum computed again", ErrSealMismatch, key.ID())
	case key.Valid():
		s.seal.Verified = true
	case !s.opts.Unverified:
		return fmt.Errorf("%w: it is sealed with seal key %s, which this import was not given (and this database does not hold): "+
			"give the key the exporting installation's `feedsvc events seal-key` prints with --seal-key-file, or import it unchecked with --unverified", ErrSealNotChecked, t.Seal.Key)
	}
	return nil
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
	if s.opts.KnownType != nil && !s.opts.KnownType(e.typ) {
		if !s.opts.AllowUnknownTypes {
			return fmt.Errorf("line %d: %w %q: this feedsvc does not know it (a newer one wrote it?); --allow-unknown-types keeps such events, which no projector reads", s.line, ErrUnknownEventType, e.typ)
		}
		s.unknown[e.typ]++
	}
	if s.count == 0 {
		s.first = e.position
	}
	s.last, s.lastID = e.position, e.id
	if s.opts.Mark != nil && e.position.Less(*s.opts.Mark) {
		s.beforeMarkID = e.id
	}
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
