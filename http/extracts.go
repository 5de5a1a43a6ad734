package http

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/readmodel/extracts"
	"github.com/feedsvc/feedsvc/readmodel/shape"
)

// Extracts for analysis: GET /log/extracts/feedback and
// GET /log/extracts/items answer the organization's feedback (with the
// item it was given on) and items (with their sources) for a time range,
// as Parquet or CSV, streamed: the rows are read and written a page at a
// time, and an extract holds at most maxExtractRows (a larger range is
// refused before anything is sent).

// ExtractQueries read the extracts (readmodel/extracts).
type ExtractQueries interface {
	CountFeedback(ctx context.Context, r extracts.Range) (int, error)
	Feedback(ctx context.Context, r extracts.Range, after *extracts.Key, limit int) ([]extracts.Feedback, error)
	CountItems(ctx context.Context, r extracts.Range) (int, error)
	Items(ctx context.Context, r extracts.Range, after *extracts.Key, limit int) ([]extracts.Item, error)
}

const (
	// maxExtractRows bounds one extract.
	maxExtractRows = 1_000_000
	// extractPage is how many rows are read, and written as one Parquet
	// row group, at a time.
	extractPage = 10_000
	// extractTimeout bounds the writing of one extract.
	extractTimeout = 10 * time.Minute
	mimeParquet    = "application/vnd.apache.parquet"
	mimeCSV        = "text/csv; charset=utf-8"
)

// feedbackParquet is a row of the feedback extract in Parquet: UUIDs as
// the UUID logical type, times as timestamps adjusted to UTC
// (milliseconds), which DuckDB reads as UUID and TIMESTAMP WITH TIME ZONE.
type feedbackParquet struct {
	FeedbackID      uuid.UUID  `parquet:"feedback_id,uuid"`
	GivenAt         time.Time  `parquet:"given_at,timestamp(millisecond)"`
	Rating          string     `parquet:"rating"`
	Comment         string     `parquet:"comment"`
	ItemID          uuid.UUID  `parquet:"item_id,uuid"`
	FeedKind        string     `parquet:"feed_kind"`
	ItemTitle       string     `parquet:"item_title"`
	ItemURL         string     `parquet:"item_url"`
	ItemAddedAt     *time.Time `parquet:"item_added_at,timestamp(millisecond)"`
	ItemPublishedAt *time.Time `parquet:"item_published_at,timestamp(millisecond)"`
	FeedID          uuid.UUID  `parquet:"feed_id,uuid"`
	FeedName        string     `parquet:"feed_name"`
	SourceID        uuid.UUID  `parquet:"source_id,uuid"`
	SourceType      string     `parquet:"source_type"`
}

// itemParquet is a row of the items extract in Parquet; its sources are
// lists.
type itemParquet struct {
	ItemID      uuid.UUID   `parquet:"item_id,uuid"`
	FeedID      uuid.UUID   `parquet:"feed_id,uuid"`
	FeedKind    string      `parquet:"feed_kind"`
	FeedName    string      `parquet:"feed_name"`
	Title       string      `parquet:"title"`
	URL         string      `parquet:"url"`
	AddedAt     time.Time   `parquet:"added_at,timestamp(millisecond)"`
	PublishedAt *time.Time  `parquet:"published_at,timestamp(millisecond)"`
	SourceIDs   []uuid.UUID `parquet:"source_ids,list" parquet-element:",uuid"`
	SourceTypes []string    `parquet:"source_types,list"`
}

var feedbackCSVHeader = []string{"feedback_id", "given_at", "rating", "comment", "item_id", "feed_kind", "item_title", "item_url",
	"item_added_at", "item_published_at", "feed_id", "feed_name", "source_id", "source_type"}

var itemCSVHeader = []string{"item_id", "feed_id", "feed_kind", "feed_name", "title", "url", "added_at", "published_at", "source_ids", "source_types"}

func feedbackOut(r extracts.Feedback) feedbackParquet {
	return feedbackParquet{
		FeedbackID: r.FeedbackID, GivenAt: r.GivenAt.UTC(), Rating: r.Rating, Comment: r.Comment, ItemID: r.ItemID, FeedKind: r.FeedKind,
		ItemTitle: r.ItemTitle, ItemURL: r.ItemURL, ItemAddedAt: utc(r.ItemAddedAt), ItemPublishedAt: utc(r.ItemPublishedAt),
		FeedID: r.FeedID, FeedName: r.FeedName, SourceID: r.SourceID, SourceType: r.SourceType,
	}
}

func (r feedbackParquet) csv() []string {
	return []string{r.FeedbackID.String(), shape.Timestamp(r.GivenAt), r.Rating, r.Comment, r.ItemID.String(), r.FeedKind, r.ItemTitle, r.ItemURL,
		csvTime(r.ItemAddedAt), csvTime(r.ItemPublishedAt), r.FeedID.String(), r.FeedName, r.SourceID.String(), r.SourceType}
}

func itemOut(r extracts.Item) itemParquet {
	return itemParquet{
		ItemID: r.ItemID, FeedID: r.FeedID, FeedKind: r.FeedKind, FeedName: r.FeedName, Title: r.Title, URL: r.URL,
		AddedAt: r.AddedAt.UTC(), PublishedAt: utc(r.PublishedAt), SourceIDs: r.SourceIDs, SourceTypes: r.SourceTypes,
	}
}

func (r itemParquet) csv() ([]string, error) {
	ids, err := json.Marshal(r.SourceIDs)
	if err != nil {
		return nil, err
	}
	types, err := json.Marshal(r.SourceTypes)
	if err != nil {
		return nil, err
	}
	return []string{r.ItemID.String(), r.FeedID.String(), r.FeedKind, r.FeedName, r.Title, r.URL, shape.Timestamp(r.AddedAt),
		csvTime(r.PublishedAt), string(ids), string(types)}, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// csvTime is a time as answers write it, or empty for none.
func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return shape.Timestamp(*t)
}

// extractRequest reads an extract's format and range.
func extractRequest(c *fiber.Ctx) (format string, r extracts.Range, err error) {
	switch format = c.Query("format"); format {
	case "parquet", "csv":
	default:
		return "", r, envelope.BadRequest("format", "is required: parquet or csv")
	}
	r.Org = organization(c)
	if r.Since, err = timeParam(c, "since"); err != nil {
		return "", r, err
	}
	if r.Until, err = timeParam(c, "until"); err != nil {
		return "", r, err
	}
	if r.Since != nil && r.Until != nil && !r.Since.Before(*r.Until) {
		return "", r, envelope.BadRequest("until", "must be after since")
	}
	return format, r, nil
}

// tooLarge refuses a range of more than maxExtractRows rows.
func tooLarge(n int) error {
	if n <= maxExtractRows {
		return nil
	}
	return envelope.BadRequest("since", "the range holds more than "+strconv.Itoa(maxExtractRows)+" rows, the most an extract holds; narrow it with since and until")
}

// feedbackExtract answers GET /log/extracts/feedback.
func (h *handlers) feedbackExtract(c *fiber.Ctx) error {
	return answerExtract(c, h, "feedback", feedbackCSVHeader, h.Reads.Extracts.CountFeedback, h.Reads.Extracts.Feedback,
		feedbackOut, func(r extracts.Feedback) extracts.Key { return extracts.Key{At: r.GivenAt, ID: r.FeedbackID} },
		func(r feedbackParquet) ([]string, error) { return r.csv(), nil })
}

// itemsExtract answers GET /log/extracts/items.
func (h *handlers) itemsExtract(c *fiber.Ctx) error {
	return answerExtract(c, h, "items", itemCSVHeader, h.Reads.Extracts.CountItems, h.Reads.Extracts.Items,
		itemOut, func(r extracts.Item) extracts.Key { return extracts.Key{At: r.AddedAt, ID: r.ItemID} },
		itemParquet.csv)
}

// answerExtract answers an extract of the rows count counts and page reads,
// page by page after the last row's key, each written as out shapes it:
// the request is read and its range refused past maxExtractRows first.
func answerExtract[Row, Out any](c *fiber.Ctx, h *handlers, name string, header []string,
	count func(context.Context, extracts.Range) (int, error),
	page func(context.Context, extracts.Range, *extracts.Key, int) ([]Row, error),
	out func(Row) Out, key func(Row) extracts.Key, csvRow func(Out) ([]string, error)) error {
	format, r, err := extractRequest(c)
	if err != nil {
		return err
	}
	n, err := count(c.UserContext(), r)
	if err != nil {
		return err
	}
	if err := tooLarge(n); err != nil {
		return err
	}
	read := func(ctx context.Context, after *extracts.Key) ([]Out, *extracts.Key, error) {
		rows, err := page(ctx, r, after, extractPage)
		if err != nil || len(rows) == 0 {
			return nil, nil, err
		}
		shaped := make([]Out, len(rows))
		for i, row := range rows {
			shaped[i] = out(row)
		}
		last := key(rows[len(rows)-1])
		return shaped, &last, nil
	}
	return streamExtract(c, h, name, format, header, read, csvRow)
}

// streamExtract answers an extract named name in format, its rows read
// page by page by read (nil rows: the end) and written as they come. A
// failure once the answer has begun is logged and ends it early: a
// Parquet file cut short has no footer and no reader takes it.
func streamExtract[R any](c *fiber.Ctx, h *handlers, name, format string, header []string,
	read func(ctx context.Context, after *extracts.Key) ([]R, *extracts.Key, error), csvRow func(R) ([]string, error)) error {
	if format == "parquet" {
		c.Set(fiber.HeaderContentType, mimeParquet)
	} else {
		c.Set(fiber.HeaderContentType, mimeCSV)
	}
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+"."+format+`"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Status(fiber.StatusOK)
	fctx := c.Context()
	_ = fctx.SetWriteDeadline(time.Now().Add(extractTimeout))
	ctx := context.WithoutCancel(c.UserContext())
	logger := h.Logger
	fctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		ctx, cancel := context.WithTimeout(ctx, extractTimeout)
		defer cancel()
		var err error
		if format == "parquet" {
			err = writeParquet(ctx, w, read)
		} else {
			err = writeCSV(ctx, w, header, read, csvRow)
		}
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			logger.WarnContext(ctx, "extract ended early", "extract", name, "format", format, "err", err)
		}
	})
	return nil
}

func writeParquet[R any](ctx context.Context, w io.Writer, read func(ctx context.Context, after *extracts.Key) ([]R, *extracts.Key, error)) error {
	pw := parquet.NewGenericWriter[R](w, parquet.Compression(&parquet.Zstd))
	var after *extracts.Key
	for {
		rows, next, err := read(ctx, after)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			break
		}
		if _, err := pw.Write(rows); err != nil {
			return fmt.Errorf("write parquet rows: %w", err)
		}
		// One row group a page: memory stays bounded by the page.
		if err := pw.Flush(); err != nil {
			return fmt.Errorf("write parquet row group: %w", err)
		}
		after = next
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("close parquet: %w", err)
	}
	return nil
}

func writeCSV[R any](ctx context.Context, w *bufio.Writer, header []string,
	read func(ctx context.Context, after *extracts.Key) ([]R, *extracts.Key, error), csvRow func(R) ([]string, error)) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	var after *extracts.Key
	for {
		rows, next, err := read(ctx, after)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			rec, err := csvRow(r)
			if err != nil {
				return err
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		after = next
	}
	cw.Flush()
	return cw.Error()
}
