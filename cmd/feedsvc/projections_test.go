package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/service/projectors"
	"github.com/feedsvc/feedsvc/testkit/testdb"
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
		`(?m)^newsitems +- \(code 2\) +\[news_items news_feed_item_counts news_article_texts\] +0/0 +never run +-$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("the list does not match %s:\n%s", want, out.String())
		}
	}
}

func TestARebuildNamesOneOrMoreProjectorsEachOnceOrAll(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		want  int    // projectors rebuilt
		error string // part of the error, when refused
	}{
		{"one projector", []string{"feeds"}, 1, ""},
		{"several, read together", []string{"feeds", "newsitems", "insights"}, 3, ""},
		{"all of them", []string{"all"}, len(projectors.All()), ""},
		{"nothing named", nil, 0, "takes projector names"},
		{"an unknown name", []string{"feeds", "nope"}, 0, `no projector named "nope"`},
		{"a name twice", []string{"feeds", "feeds"}, 0, "named twice"},
		{"all beside a name", []string{"all", "feeds"}, 0, `no projector named "all"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := rebuildArgs(c.args)
			if c.error != "" {
				if err == nil || !strings.Contains(err.Error(), c.error) {
					t.Fatalf("got %v, want an error saying %q", err, c.error)
				}
				return
			}
			if err != nil || len(ps) != c.want {
				t.Fatalf("got %d projectors and %v, want %d", len(ps), err, c.want)
			}
		})
	}
}
