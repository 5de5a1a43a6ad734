// Package shape owns the API's item response shapes and its time format,
// so every place that writes an item writes the same bytes: news items in
// the current shape and the legacy (v0) one, with each platform's post data
// (api.md 2.3, 2.5); event items in both shapes (api.md 2.9); the body of a
// webhook delivery and the event.item_added data (api.md 6); and Timestamp,
// the one time format of every response (D2).
//
// An event item is rendered from what depends on its event alone (Static,
// rendered once per event version and stored by the read model) and what
// depends on the feed and the query (ids, when it was added, relevance, and
// its occurrence block, computed here for the query's range). A news item is
// rendered from News, what its read model stores.
//
// The package imports only the domain, so read models (which store the
// static renderings), the webhook service and the HTTP handlers can all use
// it.
package shape
