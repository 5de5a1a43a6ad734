package http_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// orderFixture is a news feed that items are added to concurrently: by
// writers going through the commands, as crawls do, and by appends held
// open in a transaction while later ones commit.
type orderFixture struct {
	*itemFixture
	org    uuid.UUID
	att    map[string]any
	source uuid.UUID
}

func newOrderFixture(t *testing.T) *orderFixture {
	f := newItemFixture(t)
	att := f.h.Do("POST", "/feeds/news/"+f.feedID+"/sources", map[string]string{"sourceType": "site", "domain": "order.example"}).MustStatus(t, 201).Data()
	return &orderFixture{itemFixture: f, org: f.orgOf(t), att: att, source: uuid.MustParse(att["sourceId"].(string))}
}

// crawl adds an article found at url through the commands, without
// waiting for the projections.
func (f *orderFixture) crawl(ctx context.Context, url string) error {
	svc := f.h.Service
	d, _, err := svc.Commands.DiscoverArticle(ctx, commands.DiscoverArticle{SourceID: f.source, Content: domain.ArticleContent{URL: url, Title: url}})
	if err != nil {
		return err
	}
	_, _, err = svc.Commands.AddNewsItem(ctx, commands.AddNewsItem{
		ItemTarget: domain.ItemTarget{FeedID: uuid.MustParse(f.feedID), OrganizationID: f.org, AttachmentID: uuid.MustParse(f.att["id"].(string)),
			SourceID: f.source, SourceType: domain.SourceSite}, Article: d.ArticleDiscovered,
	})
	return err
}

// itemEvent is a NewsItemAdded of a new article at url, dated now, and
// the stream it goes to.
func (f *orderFixture) itemEvent(url string) (stream string, data []byte, err error) {
	page := uuid.New()
	data, err = domain.EncodeEvent(domain.NewsItemAdded{
		ItemID: uuid.New(), FeedID: uuid.MustParse(f.feedID), OrganizationID: f.org,
		AttachmentID: uuid.MustParse(f.att["id"].(string)), SourceID: f.source, SourceType: domain.SourceSite,
		NewsPageID: page, VersionID: uuid.New(), Content: domain.ArticleContent{URL: url, Title: url}, At: time.Now().UTC(),
	})
	return domain.NewsItemStream(uuid.MustParse(f.feedID), page), data, err
}

const insertItemEvent = `INSERT INTO events (stream_id, stream_revision, event_id, event_type, data)
	VALUES ($1, 0, $2, 'NewsItemAdded', $3) RETURNING transaction_id::text`

// appendHeld appends an item's event in a transaction that stays open for
// hold and commits only after appends begun later have committed: its log
// position comes before theirs, its commit after. It reports how many
// events of later transactions were visible before it committed.
func (f *orderFixture) appendHeld(ctx context.Context, url string, hold time.Duration) (int, error) {
	stream, data, err := f.itemEvent(url)
	if err != nil {
		return 0, err
	}
	pool := f.h.Service.DB.Pool
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	var xid string
	if err := tx.QueryRow(ctx, insertItemEvent, stream, uuid.New(), data).Scan(&xid); err != nil {
		return 0, err
	}
	time.Sleep(hold)
	var overtaken int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE transaction_id > $1::xid8`, xid).Scan(&overtaken); err != nil {
		return 0, err
	}
	return overtaken, tx.Commit(ctx)
}

// appendLate dates an item now and appends it only after delay, as a
// crawl that decided to add an item and was slow to store it: its
// createdAt is earlier than that of items stored before it.
func (f *orderFixture) appendLate(ctx context.Context, url string, delay time.Duration) error {
	stream, data, err := f.itemEvent(url)
	if err != nil {
		return err
	}
	time.Sleep(delay)
	var xid string
	return f.h.Service.DB.Pool.QueryRow(ctx, insertItemEvent, stream, uuid.New(), data).Scan(&xid)
}

// caughtUp waits until the item projector has read the whole log.
func (f *orderFixture) caughtUp(t *testing.T) {
	t.Helper()
	var commit, prepare int64
	err := f.h.Service.DB.Bun.NewRaw(`SELECT transaction_id::text::bigint, global_position FROM events
		ORDER BY transaction_id DESC, global_position DESC LIMIT 1`).Scan(context.Background(), &commit, &prepare)
	if err != nil {
		t.Fatal(err)
	}
	head := eventstore.Position{Commit: uint64(commit), Prepare: uint64(prepare)}
	if err := f.h.Service.Waiter.Wait(context.Background(), head, []string{domain.NewsItemAdded{}.EventType()}); err != nil {
		t.Fatal(err)
	}
}

// stored are the ids of the feed's items in the read model.
func (f *orderFixture) stored(t *testing.T) []string {
	t.Helper()
	var ids []string
	if err := f.h.Service.DB.Bun.NewRaw("SELECT id::text FROM news_items WHERE feed_id = ? ORDER BY id", f.feedID).
		Scan(context.Background(), &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// poller follows the feed's changes with a cursor, as a client would.
type poller struct {
	f      *orderFixture
	cursor string
	seen   map[string]int
	order  []string
}

// poll reads pages until one says nothing more follows.
func (p *poller) poll(t *testing.T) {
	t.Helper()
	for {
		c := readChanges(t, p.f.h, "/feeds/news/"+p.f.feedID+"/items?limit=7", p.cursor)
		for _, id := range c.ids {
			p.seen[id]++
			p.order = append(p.order, id)
		}
		p.cursor = c.next
		if !c.hasMore {
			return
		}
	}
}

// check fails unless the poller saw exactly want, each once.
func (p *poller) check(t *testing.T, want []string) {
	t.Helper()
	for id, n := range p.seen {
		if n != 1 {
			t.Errorf("item %s came %d times", id, n)
		}
	}
	got := make([]string, 0, len(p.seen))
	for id := range p.seen {
		got = append(got, id)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the cursor saw %d items, the feed holds %d; missed or extra: %v", len(got), len(want), symmetricDifference(got, want))
	}
}

func symmetricDifference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, "+"+x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, "-"+x)
		}
	}
	return out
}

// sequence reads every change from the start: ids and the cursor after
// each page.
func sequence(t *testing.T, f *orderFixture) []string {
	t.Helper()
	var out []string
	cursor := ""
	for {
		c := readChanges(t, f.h, "/feeds/news/"+f.feedID+"/items?limit=7", cursor)
		out = append(out, c.ids...)
		out = append(out, "cursor "+c.next)
		cursor = c.next
		if !c.hasMore {
			return out
		}
	}
}

// load runs writers crawling concurrently with appends held open and
// appends stored late, while the poller polls, and returns when all are
// stored.
func load(t *testing.T, f *orderFixture, p *poller, round string) {
	t.Helper()
	const writers, perWriter, held, late = 4, 12, 4, 4
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers+held+late)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if err := f.crawl(ctx, fmt.Sprintf("https://order.example/%s/w%d/%d", round, w, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for k := range held {
		wg.Go(func() {
			time.Sleep(time.Duration(k) * 40 * time.Millisecond) // staggered, so the held appends overlap the crawls at different points
			overtaken, err := f.appendHeld(ctx, fmt.Sprintf("https://order.example/%s/held/%d", round, k), 150*time.Millisecond)
			if err == nil && overtaken == 0 {
				err = fmt.Errorf("held append %d: no later append committed while it was open; the test did not reorder commits", k)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	for k := range late {
		wg.Go(func() {
			time.Sleep(time.Duration(k) * 30 * time.Millisecond) // staggered, as the held appends
			if err := f.appendLate(ctx, fmt.Sprintf("https://order.example/%s/late/%d", round, k), 120*time.Millisecond); err != nil {
				errs <- err
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for polling := true; polling; {
		select {
		case <-done:
			polling = false
		case <-time.After(5 * time.Millisecond):
			p.poll(t)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.caughtUp(t)
	p.poll(t)
}

func TestTheCursorNeverMissesOrRepeatsItemsCommittedOutOfOrder(t *testing.T) {
	f := newOrderFixture(t)
	p := &poller{f: f, seen: map[string]int{}}

	t.Run("concurrent crawls and appends held open while later ones commit", func(t *testing.T) {
		load(t, f, p, "first")
		p.check(t, f.stored(t))
	})

	t.Run("after a restart the cursor goes on where it was", func(t *testing.T) {
		f.h.Restart()
		load(t, f, p, "restarted")
		p.check(t, f.stored(t))
	})

	t.Run("a rebuild gives every item the same place and every cursor the same meaning", func(t *testing.T) {
		before := sequence(t, f)
		newsitems, _ := projectors.ByName("newsitems")
		if err := projections.Rebuild(context.Background(), f.h.DSN, f.h.Service.DB, f.h.Service.Store, newsitems, servicetest.Logger()); err != nil {
			t.Fatal(err)
		}
		if after := sequence(t, f); !slices.Equal(before, after) {
			t.Fatalf("read from the start, the changes differ after the rebuild:\nbefore %v\nafter  %v", before, after)
		}
		load(t, f, p, "rebuilt")
		p.check(t, f.stored(t))
	})
}
