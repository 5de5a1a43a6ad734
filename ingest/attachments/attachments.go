package attachments

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedsvc/feedsvc/domain"
)

// Attachment is a row of ingest_attachments: one feed that takes items
// from a source record (package ingest calls it ingest.Attachment).
type Attachment struct {
	AttachmentID   uuid.UUID         `bun:"attachment_id"`
	FeedID         uuid.UUID         `bun:"feed_id"`
	FeedKind       domain.FeedKind   `bun:"feed_kind"`
	OrganizationID uuid.UUID         `bun:"organization_id"`
	SourceID       uuid.UUID         `bun:"source_id"`
	SourceType     domain.SourceType `bun:"source_type"`
	Details        []byte            `bun:"details"`
	SourceEnabled  bool              `bun:"source_enabled"`
	FeedEnabled    bool              `bun:"feed_enabled"`
	AttachedAt     time.Time         `bun:"attached_at"`
	// SourceEnabledAt and FeedEnabledAt are the latest re-enables of the
	// attachment and of its feed, nil when none.
	SourceEnabledAt *time.Time `bun:"source_enabled_at"`
	FeedEnabledAt   *time.Time `bun:"feed_enabled_at"`
	// FeedRules are the feed's keyword rules; nil when it has none.
	FeedRules *domain.FeedRules `bun:"feed_rules,type:jsonb"`
}

// Target is where an item of this attachment goes: its feed, and the
// attachment and source that brought it.
func (a Attachment) Target() domain.ItemTarget {
	return domain.ItemTarget{
		FeedID: a.FeedID, OrganizationID: a.OrganizationID, AttachmentID: a.AttachmentID,
		SourceID: a.SourceID, SourceType: a.SourceType,
	}
}

// Enabled says whether both the attachment's source and its feed are
// enabled.
func (a Attachment) Enabled() bool { return a.SourceEnabled && a.FeedEnabled }

// AcceptingSince is domain.AcceptingSince for this attachment.
func (a Attachment) AcceptingSince() time.Time {
	return domain.AcceptingSince(a.AttachedAt, orZero(a.SourceEnabledAt), orZero(a.FeedEnabledAt))
}

// Accepts is domain.Accepts for this attachment.
func (a Attachment) Accepts(effectiveAt time.Time) bool {
	return domain.Accepts(a.Enabled(), a.AcceptingSince(), effectiveAt)
}

// HasRules says whether the attachment's feed has keyword rules
// (domain.FeedRules), which an article must pass too (RulesAdmit).
func (a Attachment) HasRules() bool { return a.FeedRules != nil && !a.FeedRules.IsZero() }

// RuleCheck is an article offered to a feed with rules.
type RuleCheck struct {
	Rules   domain.FeedRules
	Content domain.ArticleContent
}

// RulesAdmit says, for each check, whether the article passes its feed's
// rules, matched as a list's q matches items: its title, description and
// body text read in its language (stemmed by Postgres's dictionary for it, word for
// word when it has none or none is known; case and accents never matter),
// each rule read in that language too (readmodel/newsitems' migrations,
// item_search and item_body_search). One statement for every check.
func (q *Queries) RulesAdmit(ctx context.Context, checks []RuleCheck) ([]bool, error) {
	var langs, titles, desc, bodies, queries []string
	for _, c := range checks {
		for _, query := range c.Rules.Queries() {
			langs, titles, desc = append(langs, c.Content.Language), append(titles, c.Content.Title), append(desc, c.Content.Description)
			bodies, queries = append(bodies, c.Content.Text), append(queries, query)
		}
	}
	out := make([]bool, len(checks))
	if len(queries) == 0 {
		for i, c := range checks {
			out[i] = c.Rules.Decide(nil)
		}
		return out, nil
	}
	var matched []bool
	err := q.db.NewRaw(`SELECT coalesce(feedsvc_news_search(r.lang, r.title, r.description, r.body)
			@@ websearch_to_tsquery(feedsvc_search_config(r.lang), r.query), false)
		FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS r(lang, title, description, body, query, ord)
		ORDER BY r.ord`, pgdialect.Array(langs), pgdialect.Array(titles), pgdialect.Array(desc), pgdialect.Array(bodies), pgdialect.Array(queries)).Scan(ctx, &matched)
	if err != nil {
		return nil, fmt.Errorf("match %d articles against their feeds' rules: %w", len(checks), err)
	}
	if len(matched) != len(queries) {
		return nil, fmt.Errorf("match articles against rules: %d answers for %d rules", len(matched), len(queries))
	}
	for i, c := range checks {
		n := len(c.Rules.Queries())
		out[i], matched = c.Rules.Decide(matched[:n]), matched[n:]
	}
	return out, nil
}

// SourceDetails decodes the details of the attachment's source.
func (a Attachment) SourceDetails() (domain.SourceDetails, error) {
	var d domain.SourceDetails
	if err := json.Unmarshal(a.Details, &d); err != nil {
		return d, fmt.Errorf("decode details of source %s: %w", a.SourceID, err)
	}
	if d.SourceType == "" {
		d.SourceType = a.SourceType
	}
	return d, nil
}

func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// Columns are an Attachment's columns of ingest_attachments aliased a, in
// the order Dest scans them, for the crawler's statements that read
// attachments beside its own tables (package ingest/crawlstate).
const Columns = `a.attachment_id, a.feed_id, a.feed_kind, a.organization_id, a.source_id, a.source_type, a.details,
	a.source_enabled, a.feed_enabled, a.attached_at, a.source_enabled_at, a.feed_enabled_at, a.feed_rules`

// Dest is where a pgx Scan puts Columns.
func (a *Attachment) Dest() []any {
	return []any{&a.AttachmentID, &a.FeedID, &a.FeedKind, &a.OrganizationID, &a.SourceID, &a.SourceType, &a.Details,
		&a.SourceEnabled, &a.FeedEnabled, &a.AttachedAt, &a.SourceEnabledAt, &a.FeedEnabledAt, &a.FeedRules}
}

// Queries read the attachments.
type Queries struct{ db bun.IDB }

// NewQueries returns the queries of the attachments read model in db.
func NewQueries(db bun.IDB) *Queries { return &Queries{db: db} }

// OfSource reads every attachment of a source, enabled or not, oldest
// first.
func (q *Queries) OfSource(ctx context.Context, sourceID uuid.UUID) ([]Attachment, error) {
	var out []Attachment
	err := q.db.NewRaw(`SELECT `+Columns+` FROM ingest_attachments a WHERE a.source_id = ? ORDER BY a.attached_at`, sourceID).
		Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("read attachments of source %s: %w", sourceID, err)
	}
	return out, nil
}
