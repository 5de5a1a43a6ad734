package connector_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/connector"
	"github.com/feedsvc/feedsvc/ingest/document"
)

// reader is a connector that reads the given source types and nothing.
type reader []domain.SourceType

func (r reader) SourceTypes() []domain.SourceType { return r }
func (reader) Discover(context.Context, connector.Source, time.Time) (connector.Discovery, error) {
	return connector.Discovery{}, nil
}
func (reader) Fetch(context.Context, connector.Candidate) (document.Document, error) {
	return document.Document{}, nil
}

func TestEachSourceTypeHasAtMostOneConnector(t *testing.T) {
	web := reader{domain.SourceSite, domain.SourceSitemap}
	r, err := connector.NewRegistry(web, reader{domain.SourceInstagram})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := r.For(domain.SourceSitemap); !ok || c.SourceTypes()[0] != domain.SourceSite {
		t.Errorf("sitemaps are not read by the connector registered for them")
	}
	if _, ok := r.For(domain.SourceTikTok); ok {
		t.Errorf("a source type nobody registered has a connector")
	}
	if got := r.SourceTypes(); !slices.Equal(got, []string{"instagram", "site", "sitemap"}) {
		t.Errorf("SourceTypes = %v", got)
	}
	if _, err := connector.NewRegistry(web, reader{domain.SourceSite}); err == nil {
		t.Errorf("two connectors for sites were registered without an error")
	}
}
