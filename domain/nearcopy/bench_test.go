package nearcopy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/domain/nearcopy"
)

// BenchmarkSign signs a corpus article of about 180 words, as extraction
// does for every article page.
func BenchmarkSign(b *testing.B) {
	raw, err := os.ReadFile("testdata/articles/budget-gazette.txt")
	if err != nil {
		b.Fatal(err)
	}
	_, body, _ := strings.Cut(string(raw), "\n\n")
	for b.Loop() {
		nearcopy.Sign("Council approves $412 million budget after late-night debate", body)
	}
}

// BenchmarkCompare compares two signed pages of two sites.
func BenchmarkCompare(b *testing.B) {
	pages := readArticles(b)
	a, c := pages[0].page, pages[1].page
	for b.Loop() {
		nearcopy.Compare(a, c)
	}
}
