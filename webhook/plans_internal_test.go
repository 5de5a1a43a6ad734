package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

// A connection's first plan of a sender statement is kept replanFirst, each
// later one twice as long as the one before, up to replanAfter: the first
// plans are the ones made while the tables were likeliest empty, and one
// kept 10 s scanned webhook_deliveries for every record of a burst
// (bench/webhooks/README.md, 29 Nov 2026).
func TestASendersFirstPlansAreReplacedSoonAndLaterOnesLessOften(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	const name = "webhook_test_plan"
	preparedAt := func() time.Time {
		t.Helper()
		var at time.Time
		if err := conn.QueryRow(ctx, "SELECT prepare_time FROM pg_prepared_statements WHERE name = $1", name).Scan(&at); err != nil {
			t.Fatalf("the prepared statement: %v", err)
		}
		return at
	}
	prepare := func() {
		t.Helper()
		if err := prepareFresh(ctx, conn.Conn(), name, "SELECT count(*) FROM webhook_deliveries WHERE id = $1"); err != nil {
			t.Fatal(err)
		}
	}
	prepare()
	first := preparedAt()
	prepare()
	if got := preparedAt(); !got.Equal(first) {
		t.Fatalf("prepared again at once (%s, then %s); want the first plan kept %s", first, got, replanFirst)
	}
	keep := replanFirst
	for range 3 {
		before := preparedAt()
		time.Sleep(keep + 20*time.Millisecond)
		prepare()
		if got := preparedAt(); !got.After(before) {
			t.Fatalf("a plan kept %s past its %s was not made again", keep+20*time.Millisecond, keep)
		}
		keep *= 2
		again := preparedAt()
		// A quarter of the keep, so a loaded machine's stalls do not
		// carry the call past it.
		time.Sleep(keep / 4)
		prepare()
		if got := preparedAt(); !got.Equal(again) {
			t.Fatalf("a plan was made again after %s; want it kept %s", keep/4, keep)
		}
	}
	p, _ := conn.Conn().PgConn().CustomData()["webhook.prepared."+name].(preparedPlan)
	if p.keep != keep {
		t.Fatalf("the plan is kept %s; want %s", p.keep, keep)
	}
	for range 10 {
		p.keep = min(2*p.keep, replanAfter)
	}
	if p.keep != replanAfter {
		t.Fatalf("doubling ends at %s; want replanAfter (%s)", p.keep, replanAfter)
	}
}

// A delivery's id is its webhook's and event's (DeliveryID), and the
// primary key is what keeps the pair one delivery now that the pair's own
// unique index is gone: queuing the same item for the same webhook again
// leaves the first delivery as it was.
func TestADeliveryQueuedAgainForTheSameWebhookAndEventStaysOneDelivery(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	hook, event := uuid.New(), uuid.New()
	first := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	row := func(at time.Time) deliveryRow {
		return deliveryRow{
			ID: DeliveryID(hook, event), WebhookID: hook, OrganizationID: uuid.New(), EventID: event,
			WebhookEvent: domain.WebhookItemAdded, EventFeedID: uuid.New(), ItemID: uuid.New(),
			Status: StatusPending, Runs: 1, CreatedAt: at, UpdatedAt: at,
		}
	}
	want := row(first)
	for _, d := range []deliveryRow{want, row(first.Add(time.Hour))} {
		tx, err := db.Bun.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := insertPayloads(ctx, tx, []payloadRow{{EventID: event, Body: `{"a":1}`, CreatedAt: d.CreatedAt}}); err != nil {
			t.Fatal(err)
		}
		if err := insertDeliveries(ctx, tx, []deliveryRow{d}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var got []deliveryRow
	if err := db.Bun.NewSelect().Model(&got).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d deliveries; want 1", len(got))
	}
	g := got[0]
	if g.ID != want.ID || g.WebhookID != hook || g.EventID != event || g.OrganizationID != want.OrganizationID ||
		g.EventFeedID != want.EventFeedID || g.ItemID != want.ItemID || g.WebhookEvent != domain.WebhookItemAdded ||
		g.Status != StatusPending || g.Runs != 1 || !g.CreatedAt.Equal(first) || !g.UpdatedAt.Equal(first) {
		t.Fatalf("delivery %+v; want the first one queued, %+v", g, want)
	}
	var indexes []string
	if err := db.Bun.NewRaw("SELECT indexname FROM pg_indexes WHERE tablename = 'webhook_deliveries' ORDER BY indexname").Scan(ctx, &indexes); err != nil {
		t.Fatal(err)
	}
	if len(indexes) != 3 {
		t.Fatalf("webhook_deliveries has the indexes %v; want its key, the delivery log's and the prune's", indexes)
	}
	var bodies int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM webhook_payloads WHERE event_id = $1", event).Scan(&bodies); err != nil {
		t.Fatal(err)
	}
	if bodies != 1 {
		t.Fatalf("%d bodies for the event; want 1", bodies)
	}
}
