package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
	"github.com/feedsvc/feedsvc/testkit/testdb"
)

func TestEventsExportWritesAFileThatEventsImportLoadsIntoAnEmptyStoreOnly(t *testing.T) {
	ctx := context.Background()
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	src, srcURL := testdb.New(t)
	store := eventstore.NewPostgres(src.Pool)
	for i := range 5 {
		if _, err := store.AppendToStream(ctx, "newsfeed-"+uuid.NewString(), eventstore.NoStream(),
			eventstore.EventData{Type: "NewsFeedCreated", Data: fmt.Appendf(nil, `{"n":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Exports stop at the fence as reads do.
	storetest.ReadAllVisible(t, store, eventstore.Start, 5)
	file := filepath.Join(t.TempDir(), "log.ndjson")
	var out, errOut bytes.Buffer
	t.Setenv("DATABASE_URL", srcURL)
	if err := execute(ctx, []string{"events", "export", "--out", file}, &out, &errOut); err != nil {
		t.Fatalf("export: %v (%s)", err, errOut.String())
	}
	if out.Len() != 0 {
		t.Fatalf("an export to a file printed %q on stdout", out.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 7 {
		t.Fatalf("the file has %d lines, want a header, 5 events and a trailer\n%s", n, errOut.String())
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*partial")); len(leftovers) != 0 {
		t.Fatalf("the export left %v", leftovers)
	}

	key := filepath.Join(t.TempDir(), "seal.key")
	if err := execute(ctx, []string{"events", "seal-key", "--out", key}, &out, &errOut); err != nil {
		t.Fatalf("seal-key: %v (%s)", err, errOut.String())
	}
	dst, dstURL := testdb.New(t)
	t.Setenv("DATABASE_URL", dstURL)
	if err := execute(ctx, []string{"events", "import", "--seal-key-file", key, file}, &out, &errOut); err != nil {
		t.Fatalf("import: %v (%s)", err, errOut.String())
	}
	err = execute(ctx, []string{"events", "import", "--seal-key-file", key, file}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "already holds events") {
		t.Fatalf("a second import answered %v, want a refusal naming the non-empty store", err)
	}

	storetest.ReadAllVisible(t, eventstore.NewPostgres(dst.Pool), eventstore.Start, 5)
	out.Reset()
	if err := execute(ctx, []string{"events", "export", "--type", "NewsFeedCreated,Other", "--stream-prefix", "newsfeed-", "--since", "2000-01-01"}, &out, &errOut); err != nil {
		t.Fatalf("export to stdout: %v", err)
	}
	if n := bytes.Count(out.Bytes(), []byte("\n")); n != 7 {
		t.Fatalf("the imported store exported %d lines, want 7", n)
	}
}

func TestEventsExportRefusesFlagsItCannotRead(t *testing.T) {
	t.Setenv("FEEDSVC_LOG_LEVEL", "error")
	_, url := testdb.New(t)
	t.Setenv("DATABASE_URL", url)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a time that is neither RFC 3339 nor a date", []string{"--since", "yesterday"}, "--since"},
		{"since not before until", []string{"--since", "2026-02-01", "--until", "2026-01-01"}, "--since must be before --until"},
		{"a position without its two numbers", []string{"--from-position", "12"}, "COMMIT/PREPARE"},
		{"an organization nobody has", []string{"--org", "nobody"}, "no organization"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := execute(context.Background(), append([]string{"events", "export"}, c.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			if out.Len() != 0 {
				t.Fatalf("a refused export wrote %q", out.String())
			}
		})
	}
}
