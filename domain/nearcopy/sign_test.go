package nearcopy

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"
)

// wordsBefore and signBefore are Words and Sign as they were before the
// words were kept in one buffer: stored signatures are only comparable
// with new ones if the two agree on every text.
func wordsBefore(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range norm.NFD.String(text) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’':
		default:
			flush()
		}
	}
	flush()
	return out
}

func signBefore(title, body string) Signature {
	words := append(wordsBefore(title), wordsBefore(body)...)
	sig := Signature{Words: len(words)}
	if len(words) < MinWords {
		return sig
	}
	mins := make([]uint32, Slots)
	for i := range mins {
		mins[i] = ^uint32(0)
	}
	var buf []byte
	for i := 0; i+ShingleWords <= len(words); i++ {
		buf = buf[:0]
		for _, w := range words[i : i+ShingleWords] {
			buf = append(buf, w...)
			buf = append(buf, ' ')
		}
		h := xxhash.Sum64(buf)
		for j := range mins {
			if v := uint32(mix(h^seeds[j]) >> 32); v < mins[j] {
				mins[j] = v
			}
		}
	}
	sig.Mins = mins
	return sig
}

// randomText mixes ASCII words, punctuation, apostrophes, accented and
// decomposed letters, other scripts, digits in other scripts, marks on
// their own and invalid UTF-8.
func randomText(r *rand.Rand) string {
	parts := []string{
		"the", "Council", "APPROVES", "budget", "42", "council's", "it’s", "Kraków", "Crème", "brûlée",
		"e\u0301te\u0301", "Ωmega", "ΣΊΣΥΦΟΣ", "Москва", "東京", "٣٤٥", "ß", "İstanbul", "ǅemal", "\u0301",
		"'", "’", "-", ",", ".", " ", "\n", "\t", "\xff", "\xe2\x80", "a\u200bb", "ﬁle", "Ⅻ", "①",
	}
	var b strings.Builder
	for range r.IntN(400) {
		b.WriteString(parts[r.IntN(len(parts))])
		if r.IntN(3) > 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func TestTheSignatureAndWordsAreWhatTheyWereForEveryText(t *testing.T) {
	files, err := filepath.Glob("testdata/articles/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	type text struct{ name, title, body string }
	var texts []text
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head, body, _ := strings.Cut(string(b), "\n\n")
		texts = append(texts, text{filepath.Base(f), head, body})
	}
	texts = append(texts,
		text{"empty", "", ""},
		text{"title only", "Council approves budget", ""},
		text{"words across title and body", "one two three", strings.Repeat("four five six seven ", 30)},
		text{"apostrophes and marks only", "'’\u0301", "'' ’’ \u0301\u0301"},
	)
	r := rand.New(rand.NewPCG(40, 40))
	for i := range 300 {
		texts = append(texts, text{"random " + string(rune('a'+i%26)), randomText(r), randomText(r)})
	}
	for _, tc := range texts {
		if got, want := Words(tc.body), wordsBefore(tc.body); !slices.Equal(got, want) {
			t.Fatalf("%s: Words = %q, want %q", tc.name, got, want)
		}
		got, want := Sign(tc.title, tc.body), signBefore(tc.title, tc.body)
		if got.String() != want.String() {
			t.Fatalf("%s: Sign = %s, want %s", tc.name, got, want)
		}
	}
}
