package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/net/idna"
)

// SourceType is what kind of place content is collected from. Platform kinds
// use the real platform spellings (D1).
type SourceType string

const (
	SourceSite          SourceType = "site"
	SourceSitemap       SourceType = "sitemap"
	SourceSiteIndexPage SourceType = "siteIndexPage"
	SourceInstagram     SourceType = "instagram"
	SourceTikTok        SourceType = "tiktok"
	SourceTwitter       SourceType = "twitter"
	SourceFacebook      SourceType = "facebook"
)

// neutralAliases are the spec's neutral platform words, accepted on input only.
var neutralAliases = map[string]SourceType{
	"photoshare": SourceInstagram,
	"shortvideo": SourceTikTok,
	"microblog":  SourceTwitter,
	"socialnet":  SourceFacebook,
}

// ParseSourceType accepts the documented values and the neutral aliases.
func ParseSourceType(s string) (SourceType, error) {
	if t, ok := neutralAliases[s]; ok {
		return t, nil
	}
	switch t := SourceType(s); t {
	case SourceSite, SourceSitemap, SourceSiteIndexPage, SourceInstagram, SourceTikTok, SourceTwitter, SourceFacebook:
		return t, nil
	}
	if s == "" {
		return "", invalid("sourceType", "is required")
	}
	return "", invalid("sourceType", "must be one of site, sitemap, siteIndexPage, instagram, tiktok, twitter, facebook")
}

// IsPlatform reports whether the source is a social platform account.
func (t SourceType) IsPlatform() bool {
	switch t {
	case SourceInstagram, SourceTikTok, SourceTwitter, SourceFacebook:
		return true
	}
	return false
}

// SourceDetails is the normalized configuration of a source; the JSON form
// is what the API echoes as sourceDetails, so empty members are omitted.
type SourceDetails struct {
	SourceType   SourceType `json:"sourceType"`
	Domain       string     `json:"domain,omitempty"`
	URL          string     `json:"url,omitempty"`
	SiteID       *uuid.UUID `json:"siteId,omitempty"`
	Username     string     `json:"username,omitempty"`
	FacebookType string     `json:"facebookType,omitempty"`
	Identifier   string     `json:"identifier,omitempty"`
}

// Identity is the globally unique key of a source record (D4): two requests
// for the same domain, URL or account get the same record.
func (d SourceDetails) Identity() string {
	switch d.SourceType {
	case SourceSite:
		return "site:" + d.Domain
	case SourceSitemap, SourceSiteIndexPage:
		return string(d.SourceType) + ":" + d.URL
	case SourceFacebook:
		return "facebook:" + d.FacebookType + ":" + strings.ToLower(d.Identifier)
	default:
		return string(d.SourceType) + ":" + d.Username
	}
}

// SourceStream is the event stream of the source record with this identity.
// Keying the stream by identity makes "create or reuse" a single append with
// a no-stream expectation.
func SourceStream(d SourceDetails) string {
	sum := sha256.Sum256([]byte(d.Identity()))
	return "source-" + hex.EncodeToString(sum[:16])
}

// SourceRequest is an unvalidated source body, as the API receives it.
type SourceRequest struct {
	SourceType   string
	Domain       *string
	URL          *string
	SiteID       *string
	Username     *string
	FacebookType *string
	Identifier   *string
	// Targets is the operator's rule for the hosts a source may name; the
	// server sets it, never the client.
	Targets TargetPolicy
}

// NewSourceDetails validates and normalizes a source request (D5).
func NewSourceDetails(r SourceRequest) (SourceDetails, error) {
	t, err := ParseSourceType(r.SourceType)
	if err != nil {
		return SourceDetails{}, err
	}
	switch t {
	case SourceSite:
		domain, err := NormalizeDomain(deref(r.Domain))
		if err != nil {
			return SourceDetails{}, err
		}
		if err := r.Targets.checkTarget("domain", domainHost(domain)); err != nil {
			return SourceDetails{}, err
		}
		return SourceDetails{SourceType: t, Domain: domain}, nil
	case SourceSitemap, SourceSiteIndexPage:
		return pageSource(t, r)
	case SourceFacebook:
		return facebookSource(r)
	default:
		username, err := NormalizeHandle(deref(r.Username))
		if err != nil {
			return SourceDetails{}, err
		}
		return SourceDetails{SourceType: t, Username: username}, nil
	}
}

func pageSource(t SourceType, r SourceRequest) (SourceDetails, error) {
	u, err := NormalizeURL("url", deref(r.URL))
	if err != nil {
		return SourceDetails{}, err
	}
	if err := r.Targets.checkTarget("url", urlHost(u)); err != nil {
		return SourceDetails{}, err
	}
	if r.SiteID == nil || strings.TrimSpace(*r.SiteID) == "" {
		return SourceDetails{}, invalid("siteId", "is required")
	}
	siteID, err := uuid.Parse(strings.TrimSpace(*r.SiteID))
	if err != nil {
		return SourceDetails{}, invalid("siteId", "must be a UUID")
	}
	return SourceDetails{SourceType: t, URL: u, SiteID: &siteID}, nil
}

func facebookSource(r SourceRequest) (SourceDetails, error) {
	kind := strings.ToLower(strings.TrimSpace(deref(r.FacebookType)))
	switch kind {
	case "page", "group", "profile":
	case "":
		return SourceDetails{}, invalid("facebookType", "is required")
	default:
		return SourceDetails{}, invalid("facebookType", "must be one of page, group, profile")
	}
	id := strings.TrimPrefix(strings.TrimSpace(deref(r.Identifier)), "@")
	if id == "" || strings.ContainsAny(id, " /?#") || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return SourceDetails{}, invalid("identifier", "must be a handle or numeric id")
	}
	return SourceDetails{SourceType: SourceFacebook, FacebookType: kind, Identifier: id}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// NormalizeDomain lowercases a domain and strips a scheme and trailing
// slash, keeping a port. A path, spaces or a missing host are invalid.
func NormalizeDomain(raw string) (string, error) {
	d := strings.ToLower(strings.TrimSpace(raw))
	if d == "" {
		return "", invalid("domain", "is required")
	}
	for _, scheme := range []string{"https://", "http://"} {
		d = strings.TrimPrefix(d, scheme)
	}
	d = strings.TrimSuffix(d, "/")
	if d == "" || strings.ContainsAny(d, " \t/?#@\\") {
		return "", invalid("domain", "must be a domain without path, like example.com")
	}
	host := d
	h, port, err := net.SplitHostPort(d)
	if err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", invalid("domain", "must have a port from 1 to 65535")
		}
		host = h
	}
	if !validHost(host, err == nil) {
		return "", invalid("domain", "must be a domain without path, like example.com")
	}
	if !shortHost(host) {
		return "", invalid("domain", hostTooLong)
	}
	return d, nil
}

// hostTooLong is the issue of a host name over the DNS's limits.
const hostTooLong = "must be a host name of at most 253 characters, each label of at most 63"

// shortHost: a host name within the DNS's limits (RFC 1035 2.3.4), counted
// in its ASCII form (a Unicode name as its xn-- Punycode labels): at most
// 253 characters without a final dot, each label at most 63. An address
// literal passes.
func shortHost(host string) bool {
	if len(host) > 4*253 {
		// No Unicode name this long fits in 253 ASCII characters; this
		// also spares encoding a hostile one.
		return false
	}
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return true
	}
	ascii, err := idna.Punycode.ToASCII(strings.TrimSuffix(host, "."))
	if err != nil || len(ascii) > 253 {
		return false
	}
	for _, label := range strings.Split(ascii, ".") {
		if len(label) > 63 {
			return false
		}
	}
	return true
}

// validHost accepts a host name (letters, digits, '-' and '_' in dot-separated
// labels that neither start nor end with '-'), an IPv4 address, or an IPv6
// address in brackets ("[::1]", or "::1" when split from "[::1]:8080").
// Anything else (control characters, '<', '%', ',', '*', a bare "::1") would
// only fail later, when the crawler builds a URL from it.
func validHost(host string, hadPort bool) bool {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") && !hadPort {
		ip := net.ParseIP(host[1 : len(host)-1])
		return ip != nil && strings.Contains(host, ":")
	}
	if strings.Contains(host, ":") {
		return hadPort && net.ParseIP(host) != nil
	}
	if host == "" {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' {
				return false
			}
		}
	}
	return true
}

// NormalizeURL accepts an absolute http(s) URL and returns it with a
// lowercase scheme and host and no fragment.
func NormalizeURL(field, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", invalid(field, "is required")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "HTTP" && u.Scheme != "HTTPS") || u.Host == "" {
		return "", invalid(field, "must be an absolute http or https URL")
	}
	if strings.ContainsAny(s, " \t") {
		return "", invalid(field, "must not contain spaces")
	}
	// Credentials would be stored in events and echoed in responses.
	if u.User != nil {
		return "", invalid(field, "must not contain a user name or password")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", invalid(field, "must have a port from 1 to 65535")
		}
	}
	if !validHost(u.Hostname(), u.Port() != "" || strings.Contains(u.Hostname(), ":")) {
		return "", invalid(field, "must have a valid host")
	}
	if !shortHost(u.Hostname()) {
		return "", invalid(field, hostTooLong)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment = ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// NormalizeHandle trims, strips a leading @ and lowercases a platform handle.
func NormalizeHandle(raw string) (string, error) {
	h := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(raw), "@"))
	if h == "" {
		return "", invalid("username", "is required")
	}
	if strings.ContainsAny(h, " /?#@") || strings.IndexFunc(h, unicode.IsControl) >= 0 || len(h) > 100 {
		return "", invalid("username", "must be a handle like @example")
	}
	return h, nil
}

// Source is the shared source record aggregate (D4): one per identity,
// linked to every organization that created or attached it. Each
// organization has its own view of the record: when it first registered
// it, with what configuration (its own siteId).
type Source struct {
	id      uuid.UUID
	details SourceDetails
	views   map[uuid.UUID]SourceView
	exists  bool
}

// SourceView is a record as one organization sees it.
type SourceView struct {
	ID uuid.UUID
	// Details are the organization's own: the identity is the record's,
	// the siteId the one this organization submitted.
	Details   SourceDetails
	CreatedAt time.Time
}

// ID returns the record's id.
func (s *Source) ID() uuid.UUID { return s.id }

// Details returns the record's normalized configuration.
func (s *Source) Details() SourceDetails { return s.details }

// ViewFor returns the record as org sees it; false when org never
// registered or attached it.
func (s *Source) ViewFor(org uuid.UUID) (SourceView, bool) {
	v, ok := s.views[org]
	return v, ok
}

// Apply folds one stored event into the record's state.
func (s *Source) Apply(e Event) {
	switch ev := e.(type) {
	case SourceRegistered:
		s.id, s.details, s.exists = ev.SourceID, ev.Details, true
		s.views = map[uuid.UUID]SourceView{ev.OrganizationID: {ID: ev.SourceID, Details: ev.Details, CreatedAt: ev.At}}
	case SourceLinkedToOrganization:
		d := s.details
		if ev.Details != nil {
			d = *ev.Details
		}
		s.views[ev.OrganizationID] = SourceView{ID: s.id, Details: d, CreatedAt: ev.At}
	}
}

// Register decides the events that make details a record known to org: a
// registration for a new identity, a link for a known one org has not
// registered yet, nothing otherwise.
func (s *Source) Register(id uuid.UUID, details SourceDetails, org uuid.UUID, now time.Time) []Event {
	if !s.exists {
		return []Event{SourceRegistered{SourceID: id, SourceType: details.SourceType, Details: details, OrganizationID: org, At: now}}
	}
	if _, linked := s.views[org]; linked {
		return nil
	}
	return []Event{SourceLinkedToOrganization{SourceID: s.id, OrganizationID: org, Details: &details, At: now}}
}

// ProfileURL is the profile page of the account name on the platform of
// source type t (Facebook for any type that is not another platform).
func ProfileURL(t SourceType, name string) string {
	switch t {
	case SourceInstagram:
		return "https://www.instagram.com/" + name + "/"
	case SourceTikTok:
		return "https://www.tiktok.com/@" + name
	case SourceTwitter:
		return "https://x.com/" + name
	}
	return "https://www.facebook.com/" + name
}
