// Package crawl fetches from websites what the web connector asks for,
// politely and safely: robots.txt is honoured for pages, each host sees at
// most a few concurrent requests, and it lists the candidates of sitemaps,
// feeds and index pages. Requests go through package safehttp, so bodies,
// time and redirects are bounded and by default nothing on a private,
// loopback or link-local address can be reached: a hostile feed or
// redirect cannot make the service probe its own network.
//
// Parsing lives in package extract; this package only adds the network.
package crawl
