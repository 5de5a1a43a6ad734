package extract

import (
	"html"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// Clean trims and collapses whitespace and decodes entities. Values from
// attributes are already decoded once by the HTML parser; many CMSes encode
// titles twice ("&amp;amp;"), so a remaining entity is decoded again.
func Clean(s string) string {
	if strings.IndexByte(s, '&') >= 0 && strings.IndexByte(s, ';') >= 0 {
		s = html.UnescapeString(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// firstNonEmpty returns the first value that is non-empty after cleaning.
func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if c := Clean(v); c != "" {
			return c
		}
	}
	return ""
}

// clip shortens s to at most n runes, cutting at a word boundary and adding an
// ellipsis, so that full-text descriptions do not bloat candidates.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-") + "…"
}

// Resolve makes ref absolute against base and returns it only when it is an
// http(s) URL; the fragment is dropped because it never names a different
// document.
func Resolve(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.HasPrefix(ref, "data:") {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return ""
	}
	u.Fragment = ""
	u.RawFragment = ""
	u.Host = strings.ToLower(u.Host)
	return u.String()
}

// ToUTF8 returns body as UTF-8. Valid UTF-8 (including plain ASCII) is
// returned unchanged, which is the common case and costs one scan; otherwise
// the charset from contentType, a BOM or a <meta charset> decides, with
// windows-1252 as the HTML standard's fallback.
func ToUTF8(body []byte, contentType string) []byte {
	if utf8.Valid(body) {
		return body
	}
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" {
		return body
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return out
}
