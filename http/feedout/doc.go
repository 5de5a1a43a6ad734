// Package feedout renders a feed's items in the formats feed readers and
// calendar apps read: news items as Atom 1.0 (RFC 4287) and JSON Feed 1.1,
// event items as iCalendar (RFC 5545). It renders from the API's own item
// shapes (readmodel/shape), so a reader sees the values a client of the
// JSON API sees, and it only writes bytes: the handlers in package http
// decide what to read and who may.
package feedout
