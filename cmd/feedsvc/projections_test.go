package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/feedsvc/feedsvc/internal/testdb"
)

func TestProjectionsListShowsEachReadModelsVersionAndItsLastRebuild(t *testing.T) {
	ctx := context.Background()
	db, url := testdb.New(t)
	t.Setenv("DATABASE_URL", url)
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	var out, errOut bytes.Buffer
	if err := execute(ctx, []string{"projections", "rebuild", "feeds"}, &out, &errOut); err != nil {
		t.Fatalf("rebuild: %v (%s)", err, errOut.String())
	}
	// sources as built by a version older than the code's.
	if _, err := db.Pool.Exec(ctx, "INSERT INTO projection_checkpoints (name, version) VALUES ('sources', 0)"); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := execute(ctx, []string{"projections", "list"}, &out, &errOut); err != nil {
		t.Fatalf("list: %v", err)
	}
	for _, want := range []string{
		`(?m)^NAME +VERSION +TABLES +CHECKPOINT +UPDATED +REBUILD$`,
		`(?m)^feeds +1 +\[feeds feed_sources\] +\d+/\d+ +\S+ +v1 done \S+ \(\d+ events in \d+s\)$`,
		`(?m)^sources +0 \(code 1: outdated, serve rebuilds it\) +\[sources source_organizations\] +0/0 +\S+ +-$`,
		`(?m)^newsitems +- \(code 2\) +\[news_items news_feed_item_counts\] +0/0 +never run +-$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("the list does not match %s:\n%s", want, out.String())
		}
	}
}
