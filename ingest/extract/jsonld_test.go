package extract

import (
	"errors"
	"slices"
	"testing"

	"github.com/feedsvc/feedsvc/ingest/document"
)

// The walker serves every kind of extractor: each brings the types it
// wants, and gets them in document order from wherever they nest.
func TestTheJSONLDWalkerFindsTheTypesItIsAskedFor(t *testing.T) {
	scripts := []string{
		`{"@context":"https://schema.org","@graph":[
			{"@type":"WebPage","@id":"#page","mainEntity":{"@type":"MusicEvent","name":"Concert"}},
			{"@type":"NewsArticle","headline":"Review"},
			{"@type":["Thing","Event"],"name":"Fair"}]}`,
	}
	isEvent := func(v any) bool {
		for _, t := range LDTypes(v) {
			if t == "Event" || t == "MusicEvent" {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name   string
		wanted func(any) bool
		want   []string
	}{
		{"articles are found by the article predicate", isArticleType, []string{"Review"}},
		{"events are found by an event predicate, nested ones too", isEvent, []string{"Concert", "Fair"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, ids := JSONLDNodes(scripts, tt.wanted)
			var got []string
			for _, n := range found {
				got = append(got, firstNonEmpty(LDString(n["headline"]), LDString(n["name"])))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("found %v, want %v", got, tt.want)
			}
			if _, ok := ids["#page"]; !ok {
				t.Errorf("the node with @id #page is not indexed")
			}
		})
	}
}

func TestADocumentThatIsNotHTMLHasNoArticle(t *testing.T) {
	tests := []struct {
		name string
		doc  document.Document
	}{
		{"a PDF by its content type", document.Document{URL: "https://e.com/r.pdf", ContentType: "application/pdf", Body: []byte("%PDF-1.4")}},
		{"a PDF sniffed when no content type came with it", document.Document{URL: "https://e.com/r", Body: []byte("%PDF-1.4 ...")}},
		{"JSON", document.Document{URL: "https://e.com/a.json", ContentType: "application/json", Body: []byte(`{"title":"x"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseArticle(tt.doc); !errors.Is(err, ErrNotHTML) {
				t.Errorf("err = %v, want ErrNotHTML", err)
			}
		})
	}
}
