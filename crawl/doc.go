// Package crawl fetches what the scheduler asks for, politely and safely:
// robots.txt is honoured for pages, each host sees at most a few concurrent
// requests, bodies and redirects are bounded, and by default nothing on a
// private, loopback or link-local address can be reached, so that a hostile
// feed or redirect cannot make the service probe its own network.
//
// Parsing lives in package extract; this package only adds the network.
package crawl
