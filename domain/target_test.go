package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
)

// Sources may name only public hosts unless private networks are allowed
// (D10). Names are checked when the crawler dials; here only literals,
// read as browsers and getaddrinfo read them, so no spelling of a private
// address slips through.
func TestSourcesNamingANonPublicAddressAreRefusedUnlessPrivateNetworksAreAllowed(t *testing.T) {
	site := uuid.NewString()
	siteSource := func(d string) domain.SourceRequest { return domain.SourceRequest{SourceType: "site", Domain: &d} }
	pageSource := func(u string) domain.SourceRequest {
		return domain.SourceRequest{SourceType: "sitemap", URL: &u, SiteID: &site}
	}
	refused := []struct {
		name  string
		req   domain.SourceRequest
		field string
	}{
		{"loopback", siteSource("127.0.0.1"), "domain"},
		{"loopback with a port", siteSource("127.0.0.1:8080"), "domain"},
		{"loopback in a URL-style domain", siteSource("http://127.0.0.1/"), "domain"},
		{"a 10/8 address", siteSource("10.1.2.3"), "domain"},
		{"a 172.16/12 address", siteSource("172.16.0.1"), "domain"},
		{"a 192.168/16 address", siteSource("192.168.1.1"), "domain"},
		{"the cloud metadata address", siteSource("169.254.169.254"), "domain"},
		{"the unspecified address", siteSource("0.0.0.0"), "domain"},
		{"a shared (CGNAT) address", siteSource("100.64.0.1"), "domain"},
		{"a multicast address", siteSource("224.0.0.1"), "domain"},
		{"the broadcast address", siteSource("255.255.255.255"), "domain"},
		{"IPv6 loopback", siteSource("[::1]"), "domain"},
		{"IPv6 loopback with a port", siteSource("[::1]:8080"), "domain"},
		{"IPv4-mapped loopback", siteSource("[::ffff:127.0.0.1]"), "domain"},
		{"an IPv6 link-local address", siteSource("[fe80::1]"), "domain"},
		{"an IPv6 unique local address", siteSource("[fd00::1]"), "domain"},
		{"loopback as one decimal number", siteSource("2130706433"), "domain"},
		{"loopback as one hex number", siteSource("0x7f000001"), "domain"},
		{"loopback in short form", siteSource("127.1"), "domain"},
		{"loopback with an octal part", siteSource("0177.0.0.1"), "domain"},
		{"loopback in mixed hex", siteSource("0x7f.0.0.1"), "domain"},
		{"private in three parts", siteSource("10.0.258"), "domain"},
		{"a sitemap on loopback", pageSource("http://127.0.0.1/sitemap.xml"), "url"},
		{"a sitemap on IPv6 loopback", pageSource("http://[::1]:8080/sitemap.xml"), "url"},
		{"a sitemap on a decimal loopback", pageSource("http://2130706433/sitemap.xml"), "url"},
		{"a sitemap on a short hex loopback", pageSource("https://0x7f.1/sitemap.xml"), "url"},
		{"a sitemap on a private address", pageSource("https://192.168.0.10/sitemap.xml"), "url"},
	}
	for _, tc := range refused {
		t.Run(tc.name+" is refused naming the rule", func(t *testing.T) {
			_, err := domain.NewSourceDetails(tc.req)
			var v *domain.ValidationError
			if !errors.As(err, &v) || v.Field != tc.field || !strings.Contains(v.Issue, "public") {
				t.Fatalf("error %v; want a validation error of %s naming the public-address rule", err, tc.field)
			}
		})
		t.Run(tc.name+" is accepted when private networks are allowed", func(t *testing.T) {
			req := tc.req
			req.Targets = domain.TargetPolicy{AllowPrivateNetworks: true}
			if _, err := domain.NewSourceDetails(req); err != nil {
				t.Fatalf("error %v", err)
			}
		})
	}
	accepted := []struct {
		name string
		req  domain.SourceRequest
	}{
		{"a name", siteSource("example.com")},
		{"a name that resolves privately (checked when dialled)", siteSource("localhost")},
		{"a public IPv4 address", siteSource("93.184.216.34")},
		{"a public IPv4 address with a port", siteSource("93.184.216.34:8443")},
		{"a public IPv6 address", siteSource("[2606:4700::1111]")},
		{"a public address as one number", siteSource("134744072")},
		{"a name with digits", siteSource("1password.com")},
		{"a name whose last label has a digit and a letter", siteSource("example.a1")},
		{"a sitemap on a public address", pageSource("https://93.184.216.34/sitemap.xml")},
	}
	for _, tc := range accepted {
		t.Run(tc.name+" is accepted", func(t *testing.T) {
			if _, err := domain.NewSourceDetails(tc.req); err != nil {
				t.Fatalf("error %v", err)
			}
		})
	}
	malformed := []struct {
		name string
		req  domain.SourceRequest
	}{
		{"five numbers", siteSource("1.2.3.4.5")},
		{"a number part over 255", siteSource("256.1.1.1")},
		{"a last part too large for what is left", siteSource("1.2.65536")},
		{"a bad hex digit", siteSource("0x7g.1")},
		{"a bad octal digit", siteSource("09.1.1.1")},
		{"a number over 32 bits", siteSource("4294967296")},
	}
	for _, tc := range malformed {
		t.Run(tc.name+" is no address and refused even when private networks are allowed", func(t *testing.T) {
			req := tc.req
			req.Targets = domain.TargetPolicy{AllowPrivateNetworks: true}
			_, err := domain.NewSourceDetails(req)
			var v *domain.ValidationError
			if !errors.As(err, &v) || v.Field != "domain" {
				t.Fatalf("error %v; want a validation error of domain", err)
			}
		})
	}
}
