package domain

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"code.dny.dev/ssrf"
)

// TargetPolicy is what hosts a source may name. The zero value is the rule
// of D10: public addresses only.
type TargetPolicy struct {
	// AllowPrivateNetworks lets sources name private, loopback, link-local
	// and other non-public addresses: for development and tests.
	AllowPrivateNetworks bool
}

// maxTargetURLLength bounds a URL the service is asked to reach.
const maxTargetURLLength = 2048

// URL normalizes an absolute http(s) URL the service is to reach (a
// webhook endpoint, a page to parse) and refuses non-public address
// literals unless the policy allows them; names are checked again at
// every dial, since what they resolve to can change.
func (p TargetPolicy) URL(field, raw string) (string, error) {
	if len(raw) > maxTargetURLLength {
		return "", invalid(field, "must be at most 2048 characters")
	}
	u, err := NormalizeURL(field, raw)
	if err != nil {
		return "", err
	}
	if err := p.checkTarget(field, urlHost(u)); err != nil {
		return "", err
	}
	return u, nil
}

// publicAddresses is the crawler's dial guard (crawl.New uses the same
// library and defaults), so the API refuses exactly the literal addresses
// the crawler would never reach.
var publicAddresses = ssrf.New(ssrf.WithAnyPort())

// checkTarget refuses a host that is a non-public address literal unless
// the policy allows private networks. Names pass: what they resolve to is
// checked when the crawler dials, since it can change at any time.
func (p TargetPolicy) checkTarget(field, host string) error {
	addr, literal, ok := hostAddress(host)
	if !ok {
		return invalid(field, "must be a host name or a valid IP address")
	}
	if !literal || p.AllowPrivateNetworks {
		return nil
	}
	if publicAddresses.SafeAddr(addr) != nil {
		return invalid(field, "must be a public address: private, loopback, link-local and other non-public addresses are refused (D10)")
	}
	return nil
}

// hostAddress reads host ("example.com", "10.0.0.1", "[::1]" or "::1") as
// an address literal the way browsers (the WHATWG URL standard) and
// getaddrinfo do, so no spelling of an address passes for a name: a host
// whose last label is a number is an IPv4 address of one to four parts,
// each decimal, octal (leading 0) or hex (0x), the last filling the bytes
// left. 2130706433, 0x7f000001, 127.1 and 0177.0.0.1 are all 127.0.0.1.
// literal is false for a name; ok is false for a number that is no
// address (1.2.3.4.5, 256.0.0.1), which resolvers disagree on.
func hostAddress(host string) (addr netip.Addr, literal, ok bool) {
	if strings.Contains(host, ":") {
		addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		return addr, true, err == nil
	}
	labels := strings.Split(host, ".")
	if !numericLabel(labels[len(labels)-1]) {
		return netip.Addr{}, false, true
	}
	if len(labels) > 4 {
		return netip.Addr{}, true, false
	}
	var v uint64
	for i, label := range labels {
		n, ok := ipv4Number(label)
		last := i == len(labels)-1
		// Every part but the last is one byte; the last fills the rest.
		limit := uint64(255)
		if last {
			limit = 1<<(8*(5-len(labels))) - 1
		}
		if !ok || n > limit {
			return netip.Addr{}, true, false
		}
		if last {
			v = v<<(8*(5-len(labels))) | n
		} else {
			v = v<<8 | n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, true
}

// numericLabel is the WHATWG "ends in a number" test for one label: all
// decimal digits, or 0x followed by hex digits.
func numericLabel(label string) bool {
	if label == "" {
		return false
	}
	if hex, ok := strings.CutPrefix(strings.ToLower(label), "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return strings.Trim(label, "0123456789") == ""
}

// ipv4Number reads one part of an IPv4 literal: decimal, octal with a
// leading 0, or hex with 0x ("0x" alone is 0).
func ipv4Number(part string) (uint64, bool) {
	base := 10
	switch lower := strings.ToLower(part); {
	case strings.HasPrefix(lower, "0x"):
		part, base = part[2:], 16
	case len(part) > 1 && part[0] == '0':
		part, base = part[1:], 8
	}
	if part == "" {
		return 0, base == 16
	}
	n, err := strconv.ParseUint(part, base, 32)
	return n, err == nil
}

// domainHost is the host of a normalized domain ("example.com:8080").
func domainHost(domain string) string {
	if host, _, err := net.SplitHostPort(domain); err == nil {
		return host
	}
	return domain
}

// urlHost is the host of a normalized URL.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
