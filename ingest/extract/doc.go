// Package extract turns fetched bytes into structured data: article metadata
// from HTML pages, URLs from sitemaps and feeds, and links from index pages.
//
// Everything here is a pure function over bytes so that the network code in
// package crawl stays small and the parsing rules can be tested exhaustively
// without servers. Extraction is best-effort: real pages are messy, so each
// field is taken from the most reliable source that has it (JSON-LD, then
// OpenGraph, then other meta tags, then the document itself), except where
// sources disagree in ways a reader would settle otherwise (see
// ParseArticle).
package extract
