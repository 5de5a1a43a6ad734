package clients_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/http/clients/go/feedsvc"
	"github.com/feedsvc/feedsvc/testkit/wait"
)

// sample:go:client
// bearer sends the API key on every request of the generated client.
func bearer(key string) feedsvc.ClientOption {
	return feedsvc.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}

// end sample

// answered fails t unless the answer is a success; any other answer is
// read as the one typed error, feedsvc.Error.
func answered(t *testing.T, what string, resp *http.Response, body []byte, err error) {
	t.Helper()
	if err == nil {
		err = feedsvc.Check(resp, body)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// refused is the typed error of an answer that must be one.
func refused(t *testing.T, what string, resp *http.Response, body []byte, err error) *feedsvc.Error {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var apiErr *feedsvc.Error
	if !errors.As(feedsvc.Check(resp, body), &apiErr) {
		t.Fatalf("%s: answered %d %s, want an error", what, resp.StatusCode, body)
	}
	return apiErr
}

// crawlWithin bounds the wait for a crawl on a loaded machine.
const crawlWithin = 2 * time.Minute

// The README's walkthrough with the Go client oapi-codegen generates:
// nothing but the generated code and feedsvc.Check.
func goWalkthrough(t *testing.T, s *service, key string, rec *recorder) {
	ctx := context.Background()
	c, err := feedsvc.NewClientWithResponses(s.base, bearer(key), feedsvc.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}

	// sample:go:createNewsFeed
	created, err := c.CreateNewsFeedWithResponse(ctx, nil, feedsvc.NewsFeedCreate{Name: "Tech", Description: "Technology news"})
	// end sample
	answered(t, "create a news feed", created.HTTPResponse, created.Body, err)
	feed := created.JSON201.Data.Id

	// sample:go:addNewsFeedSource
	var site feedsvc.SourceRequest
	if err := site.FromSiteSourceRequest(feedsvc.SiteSourceRequest{SourceType: "site", Domain: s.siteHost()}); err != nil {
		t.Fatal(err)
	}
	attached, err := c.AddNewsFeedSourceWithResponse(ctx, feed, nil, site)
	// end sample
	answered(t, "attach a site", attached.HTTPResponse, attached.Body, err)

	// The backfill crawls the site: wait for its five articles.
	var items []feedsvc.NewsItem
	wait.Until(t, crawlWithin, "the site's articles", func() bool {
		// sample:go:listNewsItems
		limit := feedsvc.Limit(20)
		include := feedsvc.Include("source")
		page, err := c.ListNewsItemsWithResponse(ctx, feed, &feedsvc.ListNewsItemsParams{Limit: &limit, Include: &include})
		// end sample
		answered(t, "list the items", page.HTTPResponse, page.Body, err)
		items = page.JSON200.Data.Items
		return len(items) >= 5
	})

	// Poll with the cursor, two at a time, from the feed's first change.
	seen := map[uuid.UUID]bool{}
	cursor := ""
	for range 20 {
		two := feedsvc.Limit(2)
		page, err := c.ListNewsItemsWithResponse(ctx, feed, &feedsvc.ListNewsItemsParams{Cursor: &cursor, Limit: &two})
		answered(t, "poll the items", page.HTTPResponse, page.Body, err)
		for _, it := range page.JSON200.Data.Items {
			seen[it.Id] = true
		}
		cursor = page.JSON200.Data.Pagination.NextCursor
		if !page.JSON200.Data.Pagination.HasMore {
			break
		}
	}
	for _, it := range items {
		if !seen[it.Id] {
			t.Fatalf("polling with the cursor from the start missed item %s (saw %d)", it.Id, len(seen))
		}
	}

	// sample:go:giveNewsFeedback
	comment := "useful"
	feedback, err := c.GiveNewsFeedbackWithResponse(ctx, feed, items[0].Id, nil,
		feedsvc.FeedbackRequest{Rating: feedsvc.FeedbackRequestRatingPositive, Comment: &comment})
	// end sample
	answered(t, "give feedback", feedback.HTTPResponse, feedback.Body, err)

	// An event feed: register the site record, attach it by id, list what
	// is coming with every optional parameter left out.
	geo := struct {
		Lat      float64 `json:"lat"`
		Lng      float64 `json:"lng"`
		RadiusKm float64 `json:"radiusKm"`
	}{Lat: 52.52, Lng: 13.4, RadiusKm: 30}
	// sample:go:createEventFeed
	efeed, err := c.CreateEventFeedWithResponse(ctx, nil, feedsvc.EventFeedCreate{Name: "Concerts", Description: "Live music",
		Config: &feedsvc.EventFeedConfigInput{Geo: &geo}})
	// end sample
	answered(t, "create an event feed", efeed.HTTPResponse, efeed.Body, err)
	eventFeed := efeed.JSON201.Data.Id
	var record feedsvc.SourceRequest
	if err := record.FromSiteSourceRequest(feedsvc.SiteSourceRequest{SourceType: "site", Domain: s.siteHost()}); err != nil {
		t.Fatal(err)
	}
	// sample:go:createSource
	registered, err := c.CreateSourceWithResponse(ctx, nil, record)
	// end sample
	answered(t, "register a source record", registered.HTTPResponse, registered.Body, err)
	stored := registered.JSON201
	if stored == nil {
		stored = registered.JSON200
	}
	// sample:go:addEventFeedSource
	byID, err := c.AddEventFeedSourceWithResponse(ctx, eventFeed, nil,
		feedsvc.EventSourceRequest{SourceType: "site", SourceId: stored.Data.Id.String()})
	// end sample
	answered(t, "attach the record", byID.HTTPResponse, byID.Body, err)
	wait.Until(t, crawlWithin, "the site's concerts", func() bool {
		// sample:go:listEventItems
		events, err := c.ListEventItemsWithResponse(ctx, eventFeed, nil)
		// end sample
		answered(t, "list the events", events.HTTPResponse, events.Body, err)
		return len(events.JSON200.Data.Items) >= 2
	})
	v0, err := c.ListEventItemsV0WithResponse(ctx, eventFeed, &feedsvc.ListEventItemsV0Params{})
	answered(t, "list the events in the legacy shape", v0.HTTPResponse, v0.Body, err)

	// Webhooks: subscribe a receiver, see it listed, send it a test
	// delivery, unsubscribe.
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer receiver.Close()
	// sample:go:createWebhook
	hook, err := c.CreateWebhookWithResponse(ctx, nil, feedsvc.WebhookCreate{Url: receiver.URL + "/hooks",
		Events: []feedsvc.WebhookCreateEvents{feedsvc.WebhookCreateEventsEventItemAdded}})
	// end sample
	answered(t, "create a webhook", hook.HTTPResponse, hook.Body, err)
	hooks, err := c.ListWebhooksWithResponse(ctx)
	answered(t, "list the webhooks", hooks.HTTPResponse, hooks.Body, err)
	if len(hooks.JSON200.Data) != 1 {
		t.Fatalf("%d webhooks listed, want 1", len(hooks.JSON200.Data))
	}
	hookID := hook.JSON201.Data.Id.String()
	sent, err := c.TestWebhookWithResponse(ctx, nil, feedsvc.TestWebhookJSONRequestBody{Url: receiver.URL + "/hooks",
		Event: "event.item_added", WebhookId: &hookID})
	answered(t, "send a test delivery", sent.HTTPResponse, sent.Body, err)
	if !sent.JSON200.Data.Delivered {
		t.Fatalf("the test delivery was not delivered: %s", sent.Body)
	}
	gone, err := c.DeleteWebhookWithResponse(ctx, hook.JSON201.Data.Id, nil)
	answered(t, "delete the webhook", gone.HTTPResponse, gone.Body, err)

	// Error cases, every one read through feedsvc.Error.
	// sample:go:errors
	missing, err := c.GetNewsFeedWithResponse(ctx, uuid.New())
	if apiErr := refused(t, "get a missing feed", missing.HTTPResponse, missing.Body, err); apiErr.Code != "NOT_FOUND" {
		t.Fatalf("a missing feed: %v", apiErr)
	}
	// end sample
	if missing.JSON404 == nil || missing.JSON404.Error.Resource != "feed" {
		t.Fatalf("a missing news feed's 404 names no resource: %s", missing.Body)
	}
	blank, err := c.CreateNewsFeedWithResponse(ctx, nil, feedsvc.NewsFeedCreate{Name: "", Description: "x"})
	if apiErr := refused(t, "create a nameless feed", blank.HTTPResponse, blank.Body, err); apiErr.Status != 400 || apiErr.Code != "VALIDATION_ERROR" {
		t.Fatalf("a nameless feed: %v", apiErr)
	}
	noEvents, err := c.GetEventFeedWithResponse(ctx, uuid.New())
	if apiErr := refused(t, "get a missing event feed", noEvents.HTTPResponse, noEvents.Body, err); apiErr.Code != "NOT_FOUND" {
		t.Fatalf("a missing event feed: %v", apiErr)
	}
	badSince := "not a date"
	wrong, err := c.ListEventItemsWithResponse(ctx, eventFeed, &feedsvc.ListEventItemsParams{Since: &badSince})
	if apiErr := refused(t, "list events since nonsense", wrong.HTTPResponse, wrong.Body, err); apiErr.Code != "BAD_REQUEST" {
		t.Fatalf("events since nonsense: %v", apiErr)
	}
	stranger, err := feedsvc.NewClientWithResponses(s.base, bearer("fsk_nope"))
	if err != nil {
		t.Fatal(err)
	}
	denied, err := stranger.ListNewsFeedsWithResponse(ctx)
	if apiErr := refused(t, "list with a bad key", denied.HTTPResponse, denied.Body, err); apiErr.Status != 401 || apiErr.Code != "AUTHENTICATION_FAILED" || apiErr.Message == "" {
		t.Fatalf("a bad key: %v", apiErr)
	}

	// Disable the source, delete the feed.
	disabled, err := c.UpdateNewsFeedSourceWithResponse(ctx, feed, attached.JSON201.Data.Id, nil, feedsvc.UpdateNewsFeedSourceJSONRequestBody{Enabled: false})
	answered(t, "disable the source", disabled.HTTPResponse, disabled.Body, err)
	deleted, err := c.DeleteNewsFeedWithResponse(ctx, feed, nil)
	answered(t, "delete the feed", deleted.HTTPResponse, deleted.Body, err)
}
