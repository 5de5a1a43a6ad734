package feedsvc_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/http/clients/go/feedsvc"
)

// Reading a news feed's items with the cursor, as README.md in this folder
// shows: the API key on every request, every page until HasMore is false,
// and any error answer read as *feedsvc.Error. It needs a running service
// (FEEDSVC_URL, FEEDSVC_API_KEY, FEEDSVC_FEED), so it has no Output and
// `go test` only compiles it; the clients test runs the same calls
// against a real `feedsvc serve`.
func Example() {
	ctx := context.Background()
	key := os.Getenv("FEEDSVC_API_KEY")
	c, err := feedsvc.NewClientWithResponses(os.Getenv("FEEDSVC_URL"),
		feedsvc.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	feed, err := uuid.Parse(os.Getenv("FEEDSVC_FEED"))
	if err != nil {
		log.Fatal(err)
	}

	cursor := "" // from the feed's first change; keep the last NextCursor to poll for new items
	limit := feedsvc.Limit(50)
	for {
		page, err := c.ListNewsItemsWithResponse(ctx, feed, &feedsvc.ListNewsItemsParams{Cursor: &cursor, Limit: &limit})
		if err != nil {
			log.Fatal(err) // the request did not get an answer
		}
		if err := feedsvc.Check(page.HTTPResponse, page.Body); err != nil {
			var apiErr *feedsvc.Error
			if errors.As(err, &apiErr) && apiErr.Code == "NOT_FOUND" {
				log.Fatalf("no news feed %s for this key", feed)
			}
			log.Fatal(err) // docs/errors.md: every code, and whether to retry
		}
		for _, item := range page.JSON200.Data.Items {
			if item.Title != nil {
				fmt.Println(*item.Title)
			}
		}
		cursor = page.JSON200.Data.Pagination.NextCursor
		if !page.JSON200.Data.Pagination.HasMore {
			break
		}
	}
}
