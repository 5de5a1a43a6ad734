// Package search is the service's query syntax for finding items: the web
// search syntax a list's `q`, a feed's rules and a webhook's filter are
// written in. It parses a query into terms and matches one against an
// item's text; it knows nothing of SQL (the read models hand Postgres the
// query's canonical form, String, as a bound parameter).
//
// The syntax, as web search engines take it:
//
//	climate policy        both words (every term must match)
//	"climate policy"      the phrase: the words next to each other, in order
//	climate OR weather    either word (OR, in capitals, between two terms)
//	climate -sport        climate, and not sport (a phrase may be excluded too)
//
// OR binds tighter than the spaces between terms: `a b OR c` is a and
// (b or c). Words are compared without regard to case or accents. An OR
// that does not stand between two terms to look for is ignored; a quote
// left open runs to the end of the query. A query must name at least one
// term to look for: exclusions alone, or nothing but punctuation, are
// refused.
package search

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Bounds on a query: long enough for any real search, short enough that
// one query costs Postgres bounded work.
const (
	MaxLength = 256 // characters
	MaxTerms  = 16  // words and phrases, excluded ones included
)

// SyntaxError says what is wrong with a query, without quoting it.
type SyntaxError struct{ Issue string }

func (e *SyntaxError) Error() string { return "query " + e.Issue }

// Term is a word, or a phrase of words that must stand together in order:
// its words in lower case, each letters, marks and digits only.
type Term struct{ Words []string }

// Phrase is whether the term is more than one word.
func (t Term) Phrase() bool { return len(t.Words) > 1 }

// Clause is a term to look for, or several of which one must match (OR).
type Clause struct{ AnyOf []Term }

// Query is a parsed query: every clause must match and no excluded term
// may. The zero Query is no query (IsZero).
type Query struct {
	All     []Clause
	Exclude []Term
}

// IsZero is whether q is no query at all.
func (q Query) IsZero() bool { return len(q.All) == 0 && len(q.Exclude) == 0 }

// Parse reads a query. Its errors never quote it.
func Parse(s string) (Query, error) {
	if !utf8.ValidString(s) {
		return Query{}, &SyntaxError{"must be UTF-8 text"}
	}
	if n := utf8.RuneCountInString(s); n > MaxLength {
		return Query{}, &SyntaxError{"must be at most " + strconv.Itoa(MaxLength) + " characters"}
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && !unicode.IsSpace(r) }) >= 0 {
		return Query{}, &SyntaxError{"must not contain control characters"}
	}
	var (
		q       Query
		terms   int
		pending bool // the last clause may take an OR'd term
		orNext  bool // an OR stands between it and the next term
	)
	for _, tok := range lex(s) {
		if tok.or {
			orNext = pending
			continue
		}
		words := Words(tok.text)
		if len(words) == 0 {
			continue // punctuation alone: nothing to look for
		}
		if terms++; terms > MaxTerms {
			return Query{}, &SyntaxError{"must hold at most " + strconv.Itoa(MaxTerms) + " words and phrases"}
		}
		term := Term{Words: words}
		switch {
		case tok.exclude:
			q.Exclude = append(q.Exclude, term)
			pending, orNext = false, false
		case orNext:
			last := &q.All[len(q.All)-1]
			last.AnyOf = append(last.AnyOf, term)
			orNext = false
		default:
			q.All = append(q.All, Clause{AnyOf: []Term{term}})
			pending = true
		}
	}
	if len(q.All) == 0 {
		if len(q.Exclude) > 0 {
			return Query{}, &SyntaxError{"must name a word or phrase to look for, not only ones to exclude"}
		}
		return Query{}, &SyntaxError{"must name a word or phrase to look for"}
	}
	return q, nil
}

// token is one term of the raw query, or an OR.
type token struct {
	text    string
	exclude bool
	quoted  bool
	or      bool
}

// lex splits a query into terms: quoted phrases, words between spaces,
// each perhaps excluded with a leading '-', and OR.
func lex(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		exclude := false
		if r == '-' && i+1 < len(s) {
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if !unicode.IsSpace(next) {
				exclude = true
				i++
				r, size = next, utf8.RuneLen(next)
			}
		}
		if r == '"' {
			i += size
			end := strings.IndexByte(s[i:], '"')
			if end < 0 {
				end = len(s) - i
			}
			out = append(out, token{text: s[i : i+end], exclude: exclude, quoted: true})
			i = min(len(s), i+end+1)
			continue
		}
		end := strings.IndexFunc(s[i:], func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if end < 0 {
			end = len(s) - i
		}
		text := s[i : i+end]
		i += end
		out = append(out, token{text: text, exclude: exclude, or: text == "OR" && !exclude})
	}
	return out
}

// Words splits text into its words, in lower case: runs of letters, marks
// and digits. Everything else separates words.
func Words(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(norm.NFC.String(text), func(r rune) bool { return !isWordRune(r) }) {
		out = append(out, strings.ToLower(w))
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

// String is the query's canonical form: each term quoted, alternatives
// joined by OR, exclusions marked with '-'. It holds only words, spaces,
// quotes, '-' and OR, reads back as itself under Parse, and reads the same
// under Postgres's websearch_to_tsquery as under Parse.
func (q Query) String() string {
	var b strings.Builder
	for _, c := range q.All {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		for i, t := range c.AnyOf {
			if i > 0 {
				b.WriteString(" OR ")
			}
			writeTerm(&b, t)
		}
	}
	for _, t := range q.Exclude {
		b.WriteString(" -")
		writeTerm(&b, t)
	}
	return b.String()
}

func writeTerm(b *strings.Builder, t Term) {
	b.WriteByte('"')
	b.WriteString(strings.Join(t.Words, " "))
	b.WriteByte('"')
}

// Text is an item's text folded for matching: its words without case or
// accents, in order.
type Text struct{ words []string }

// Fold reads the texts of an item (its title, its description, ...) for
// matching; a phrase never spans two of them.
func Fold(texts ...string) Text {
	var t Text
	for i, s := range texts {
		if i > 0 {
			t.words = append(t.words, "") // no phrase runs across fields
		}
		for _, w := range Words(s) {
			t.words = append(t.words, fold(w))
		}
	}
	return t
}

// Matches is whether q matches an item's text: words and phrases
// compared without case or accents (no stemming: "run" does not match
// "running"). The zero Query matches everything.
func (q Query) Matches(t Text) bool {
	for _, c := range q.All {
		if !slicesAny(c.AnyOf, t.has) {
			return false
		}
	}
	return !slicesAny(q.Exclude, t.has)
}

func slicesAny(terms []Term, has func(Term) bool) bool {
	for _, term := range terms {
		if has(term) {
			return true
		}
	}
	return false
}

// has is whether the text holds the term's words next to each other.
func (t Text) has(term Term) bool {
	want := make([]string, len(term.Words))
	for i, w := range term.Words {
		want[i] = fold(w)
	}
	for i := 0; i+len(want) <= len(t.words); i++ {
		match := true
		for j, w := range want {
			if t.words[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// fold drops a word's accents: its letters decomposed, their combining
// marks removed ("café" is "cafe", "Müller" "muller").
func fold(w string) string {
	out, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), w)
	if err != nil || out == "" {
		return w
	}
	return out
}
