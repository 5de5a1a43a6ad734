package extract

import "github.com/microcosm-cc/bluemonday"

// safePolicy keeps what user-generated content may hold (paragraphs,
// headings, emphasis, lists, tables, links with rel=nofollow, images) and
// drops scripts, styles, event handlers, frames and javascript: URLs. A
// policy is safe for concurrent use once built.
var safePolicy = bluemonday.UGCPolicy()

// SafeHTML is markup from a page made safe to show in another: event
// descriptions, the main text of a parsed article.
func SafeHTML(s string) string { return safePolicy.Sanitize(s) }
