// Package nearcopy decides whether two pages are copies of one story, and
// whether two happenings listed by different sources are one. It is pure:
// no I/O, no clock.
//
// A page is compared by its address and by its text. Two addresses that
// differ only in what sites add to a URL to track or re-render a page
// (utm_ parameters, fbclid, an AMP or print variant, www., http/https,
// a trailing slash) are one page (SameAddress). Otherwise the text
// decides: the title and the body are read as words, every run of
// ShingleWords words is a shingle, and a MinHash of the shingles (Slots
// minima under as many hash functions) is the page's Signature. The
// share of equal minima estimates the Jaccard similarity of two pages'
// shingle sets (Similarity), and with the texts' lengths the share of the
// shorter text found in the longer (Containment); Compare says which
// figures make a copy. A text of fewer
// than MinWords words is never compared: short pages are mostly a
// site's template (a teaser sentence, a subscription prompt), and two of
// them would look alike for what they do not say.
package nearcopy

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"
)

const (
	// Slots is the number of MinHash minima in a signature.
	Slots = 64
	// ShingleWords is the number of words in one shingle.
	ShingleWords = 4
	// MinWords is the fewest words a text needs to be compared.
	MinWords = 60
	// SameSiteCopyAt is the Similarity from which two texts of one site
	// are one story.
	SameSiteCopyAt = 0.9
	// MinSimilarity is the least Similarity of two texts of two sites
	// that are one story.
	MinSimilarity = 0.3
	// ContainedAt is the Containment from which two texts of two sites
	// with related titles are one story.
	ContainedAt = 0.7
	// RewrittenContainedAt is the Containment from which two texts of two
	// sites are one story whatever their titles.
	RewrittenContainedAt = 0.8
	// RelatedTitles is the share of title words two titles must share
	// (of the shorter title's words) to count as related.
	RelatedTitles = 0.5
	// BandRows is the number of minima in one band of the index: two
	// signatures are candidates when one band is equal (see Bands).
	BandRows = 2
)

// Signature is the MinHash of a text's shingles. The zero Signature
// (a text too short) is never similar to anything.
type Signature struct {
	// Words is the number of words the text had.
	Words int
	// Mins are the Slots minima; nil when Words < MinWords.
	Mins []uint32
}

// Comparable reports whether the signature takes part in text comparison.
func (s Signature) Comparable() bool { return len(s.Mins) == Slots }

// Words splits text into lower-cased words of letters and digits, their
// accents dropped ("Kraków" is "krakow"); an apostrophe inside a word is
// dropped ("council's" is "councils").
func Words(text string) []string {
	var ws wordList
	ws.add(text)
	out := make([]string, len(ws.ends))
	for i := range ws.ends {
		out[i] = string(ws.word(i))
	}
	return out
}

// wordList holds the words of Words one after another in one buffer, each
// followed by a space, so that a run of words is one slice of it: the
// shingles Sign hashes are read in place instead of each word being a
// string of its own and each shingle a copy (the signature was ~40% of
// what parsing an article page costs, most of it those allocations).
type wordList struct {
	buf  []byte
	ends []int // ends[i] is where word i's trailing space ends
}

// add appends the words of text, split and folded as Words says.
func (ws *wordList) add(text string) {
	start := len(ws.buf)
	flush := func() {
		if len(ws.buf) > start {
			ws.buf = append(ws.buf, ' ')
			ws.ends = append(ws.ends, len(ws.buf))
			start = len(ws.buf)
		}
	}
	for _, r := range norm.NFD.String(text) {
		if r < utf8.RuneSelf {
			// ASCII, most of most texts: the same answers as below,
			// without the tables.
			switch {
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
				ws.buf = append(ws.buf, byte(r))
			case 'A' <= r && r <= 'Z':
				ws.buf = append(ws.buf, byte(r)+'a'-'A')
			case r == '\'':
			default:
				flush()
			}
			continue
		}
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			ws.buf = utf8.AppendRune(ws.buf, unicode.ToLower(r))
		case r == '’':
		default:
			flush()
		}
	}
	flush()
}

// word is word i without its trailing space.
func (ws *wordList) word(i int) []byte {
	return ws.buf[ws.start(i) : ws.ends[i]-1]
}

func (ws *wordList) start(i int) int {
	if i == 0 {
		return 0
	}
	return ws.ends[i-1]
}

// Sign computes the signature of a page from its title and body text.
func Sign(title, body string) Signature {
	ws := wordList{buf: make([]byte, 0, len(title)+len(body)+1), ends: make([]int, 0, (len(title)+len(body))/5)}
	ws.add(title)
	ws.add(body)
	sig := Signature{Words: len(ws.ends)}
	if len(ws.ends) < MinWords {
		return sig
	}
	var mins [Slots]uint32
	for i := range mins {
		mins[i] = ^uint32(0)
	}
	// A shingle is ShingleWords words, each followed by a space: in ws, one
	// slice.
	for i := 0; i+ShingleWords <= len(ws.ends); i++ {
		h := xxhash.Sum64(ws.buf[ws.start(i):ws.ends[i+ShingleWords-1]])
		for j := range mins {
			if v := uint32(mix(h^seeds[j]) >> 32); v < mins[j] {
				mins[j] = v
			}
		}
	}
	sig.Mins = mins[:]
	return sig
}

// seeds are the Slots hash functions' keys, fixed forever: a stored
// signature is only comparable with one made by the same functions.
var seeds = func() [Slots]uint64 {
	var s [Slots]uint64
	x := uint64(0x9E3779B97F4A7C15)
	for i := range s {
		x = mix(x + uint64(i) + 1)
		s[i] = x
	}
	return s
}()

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}

// Similarity estimates the Jaccard similarity of two texts' shingle sets;
// 0 when either is too short to compare.
func Similarity(a, b Signature) float64 {
	if !a.Comparable() || !b.Comparable() {
		return 0
	}
	same := 0
	for i := range a.Mins {
		if a.Mins[i] == b.Mins[i] {
			same++
		}
	}
	return float64(same) / Slots
}

// Bands are the signature's index keys within scope (a feed's id): two
// comparable signatures whose Similarity is s share at least one band
// with a probability of 1-(1-s^BandRows)^(Slots/BandRows): 0.95 at
// MinSimilarity, 0.9999 from 0.5, and 0.08 at 0.05. Nil when the
// signature is not comparable.
func (s Signature) Bands(scope []byte) []int64 {
	if !s.Comparable() {
		return nil
	}
	out := make([]int64, 0, Slots/BandRows)
	buf := make([]byte, 0, len(scope)+2+4*BandRows)
	for b := 0; b < Slots/BandRows; b++ {
		buf = append(buf[:0], scope...)
		buf = append(buf, byte(b), byte(b>>8))
		for _, m := range s.Mins[b*BandRows : (b+1)*BandRows] {
			buf = binary.LittleEndian.AppendUint32(buf, m)
		}
		out = append(out, int64(xxhash.Sum64(buf)))
	}
	return out
}

// signaturePrefix marks the stored form's version.
const signaturePrefix = "m1."

// String is the stored form: "m1.<words>.<base64 of the minima>", or
// "m1.<words>" for a text too short to compare.
func (s Signature) String() string {
	if !s.Comparable() {
		return signaturePrefix + strconv.Itoa(s.Words)
	}
	b := make([]byte, 0, 4*Slots)
	for _, m := range s.Mins {
		b = binary.LittleEndian.AppendUint32(b, m)
	}
	return signaturePrefix + strconv.Itoa(s.Words) + "." + base64.RawURLEncoding.EncodeToString(b)
}

// ParseSignature reads the stored form.
func ParseSignature(v string) (Signature, error) {
	rest, ok := strings.CutPrefix(v, signaturePrefix)
	if !ok {
		return Signature{}, errors.New("nearcopy: unknown signature format")
	}
	words, mins, hasMins := strings.Cut(rest, ".")
	n, err := strconv.Atoi(words)
	if err != nil || n < 0 {
		return Signature{}, fmt.Errorf("nearcopy: signature word count: %q", words)
	}
	s := Signature{Words: n}
	if !hasMins {
		return s, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(mins)
	if err != nil || len(b) != 4*Slots {
		return Signature{}, errors.New("nearcopy: signature minima malformed")
	}
	s.Mins = make([]uint32, Slots)
	for i := range s.Mins {
		s.Mins[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return s, nil
}

// MarshalText stores the signature as String.
func (s Signature) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (s *Signature) UnmarshalText(b []byte) error {
	v, err := ParseSignature(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
