// Package social is the connector for accounts on social platforms
// (instagram, tiktok, twitter and facebook sources). It reads them through
// each platform's provider (package platform): the account's posts since
// the worker's date are the candidates, each carrying its post, and a
// candidate's document is that post (platform.MediaType), which the
// extractors read into an article and, for event feeds, events. It also
// looks an account up before a source naming it is stored.
package social

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/document"
	"github.com/feedsvc/feedsvc/ingest/platform"
)

const (
	// maxPages bounds the pages one Discover reads: 1,000 posts of 100
	// a page cover the backfill window of all but the most prolific
	// accounts, whose oldest posts of the window are then left out.
	maxPages = 10
	// accountTTL is how long a looked-up account (its id, name and
	// avatar) is reused before it is looked up again.
	accountTTL = 24 * time.Hour
	// lookupTimeout bounds the lookup of a source add, budget wait
	// included, so a request never hangs on a slow platform.
	lookupTimeout = 20 * time.Second
)

// Connector reads platform accounts.
type Connector struct {
	providers map[domain.SourceType]platform.Platform
	log       *slog.Logger
	now       func() time.Time
}

// New returns the connector reading each platform through its provider;
// a platform without one has no sources (CheckSource refuses them).
func New(providers map[domain.SourceType]platform.Platform, logger *slog.Logger) *Connector {
	if logger == nil {
		logger = slog.Default()
	}
	return &Connector{providers: providers, log: logger.With("connector", "social"), now: time.Now}
}

// SourceTypes implements connector.Connector.
func (c *Connector) SourceTypes() []domain.SourceType {
	return []domain.SourceType{domain.SourceInstagram, domain.SourceTikTok, domain.SourceTwitter, domain.SourceFacebook}
}

// CheckSource looks up the account a new source names, before anything is
// stored (api.md 4.3): a platform without a provider is a 400 naming the
// settings to set; an account that does not exist, is private or cannot
// be read is a 404; a platform that does not answer (or asks us to wait)
// is ErrSourceUnavailable. Sources of other kinds pass.
func (c *Connector) CheckSource(ctx context.Context, d domain.SourceDetails) error {
	if !d.SourceType.IsPlatform() {
		return nil
	}
	p, err := c.provider(d.SourceType)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	_, err = p.Lookup(ctx, platform.RefOf(d))
	var nf *platform.NotFound
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nf):
		return &domain.NotFoundError{Resource: "account", Reason: nf.Reason}
	case errors.Is(err, platform.ErrNotFound):
		return &domain.NotFoundError{Resource: "account"}
	}
	c.log.Warn("account lookup failed", "source_type", d.SourceType, "err", err)
	return fmt.Errorf("look up %s account: %w: %w", d.SourceType, domain.ErrSourceUnavailable, err)
}

func (c *Connector) provider(t domain.SourceType) (platform.Platform, error) {
	p, ok := c.providers[t]
	if !ok {
		return nil, &domain.ValidationError{Field: "sourceType",
			Issue: fmt.Sprintf("%s sources are not configured on this server: set %s", t, platform.Needed(t))}
	}
	return p, nil
}

// state is what the connector keeps of a source between crawls: its
// account as last looked up.
type state struct {
	Account    platform.Account `json:"account"`
	LookedUpAt time.Time        `json:"lookedUpAt"`
}

// Discover lists the account's posts since since, every page up to
// maxPages. The listing is exhaustive: a post, or a page event, that can
// still change is listed again while it matters, so the worker re-reads
// event documents only from it.
func (c *Connector) Discover(ctx context.Context, src connector.Source, since time.Time) (connector.Discovery, error) {
	out := connector.Discovery{Exhaustive: true}
	p, err := c.provider(src.Details.SourceType)
	if err != nil {
		return out, connector.Judged(err, connector.Judgement{SourceWide: true})
	}
	acct, kept, err := c.account(ctx, p, src)
	out.State = kept
	if err != nil {
		return out, judge(err)
	}
	cursor := ""
	for range maxPages {
		page, err := p.Posts(ctx, acct, since, cursor)
		out.Listings++
		if err != nil {
			out.ListingErrors++
			return out, judge(fmt.Errorf("list posts of %s account %s: %w", src.Details.SourceType, acct.ID, err))
		}
		for _, post := range page.Posts {
			cand, err := candidate(post)
			if err != nil {
				c.log.Warn("post skipped", "source_id", src.ID, "post_id", post.ID, "err", err)
				continue
			}
			out.Candidates = append(out.Candidates, cand)
		}
		if cursor = page.Next; cursor == "" {
			return out, nil
		}
	}
	c.log.Info("listing cut at its page bound", "source_id", src.ID, "pages", maxPages, "posts", len(out.Candidates))
	return out, nil
}

// account is the source's account: the one kept while fresh, else a new
// lookup, with the state to keep (nil when the kept one served).
func (c *Connector) account(ctx context.Context, p platform.Platform, src connector.Source) (platform.Account, json.RawMessage, error) {
	var kept state
	// A malformed state is only a lost cache: the account is looked up again.
	_ = json.Unmarshal(src.State, &kept)
	if kept.Account.ID != "" && c.now().Sub(kept.LookedUpAt) < accountTTL {
		return kept.Account, nil, nil
	}
	acct, err := p.Lookup(ctx, platform.RefOf(src.Details))
	if err != nil {
		return platform.Account{}, nil, fmt.Errorf("look up %s account: %w", src.Details.SourceType, err)
	}
	st, err := json.Marshal(state{Account: acct, LookedUpAt: c.now()})
	if err != nil {
		return platform.Account{}, nil, fmt.Errorf("encode account state: %w", err)
	}
	return acct, st, nil
}

// candidate is a post as the worker takes it: dated by its publication,
// carrying its document. A page event is undated: whether an event feed
// takes it is judged by when it happens, not when it was posted.
func candidate(p platform.Post) (connector.Candidate, error) {
	doc, err := platform.NewDocument(p)
	if err != nil {
		return connector.Candidate{}, err
	}
	c := connector.Candidate{URL: p.URL, Title: p.Title, Description: p.Text, ImageURL: p.ImageURL, Data: doc.Body}
	if p.Event == nil {
		c.PublishedAt = p.PublishedAt
	}
	return c, nil
}

// errNotListed: a post's document is what its listing gave; there is no
// other way to fetch it.
var errNotListed = errors.New("a post is read from its account's listing only")

// Fetch returns the post a candidate carries.
func (c *Connector) Fetch(_ context.Context, cand connector.Candidate) (document.Document, error) {
	if len(cand.Data) == 0 {
		return document.Document{}, connector.Judged(fmt.Errorf("%s: %w", cand.URL, errNotListed), connector.Judgement{Permanent: true})
	}
	return document.Document{URL: cand.URL, ContentType: platform.MediaType, Body: cand.Data}, nil
}

// judge attaches the judgement of a platform error: a rate limit is about
// every request to the platform and says how long to wait; an account no
// longer readable, or a request the platform refuses, will not change by
// asking again soon; anything else may pass.
func judge(err error) error {
	var rl *platform.RateLimitError
	var refused interface{ Permanent() bool }
	switch {
	case errors.As(err, &rl):
		return connector.Judged(err, connector.Judgement{SourceWide: true, RetryAfter: rl.RetryAfter(time.Now())})
	case errors.Is(err, platform.ErrNotFound):
		return connector.Judged(err, connector.Judgement{Permanent: true, SourceWide: true})
	case errors.As(err, &refused):
		return connector.Judged(err, connector.Judgement{Permanent: refused.Permanent(), SourceWide: true})
	}
	return connector.Judged(err, connector.Judgement{SourceWide: true})
}
