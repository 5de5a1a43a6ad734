package calendar

import (
	"cmp"
	"net/url"
	"strconv"
	"strings"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/extract"
	"github.com/feedsvc/feedsvc/internal/gazetteer"
)

// address is a postal address as schema.org or a line of text gives it.
type address struct {
	venue, street, postalCode, locality, region, country string
}

// location is the location block of an address, coordinates and an
// online place, any of which may be missing; nil when all are.
func (a address) location(coords *domain.Coordinates, online *domain.Online) *domain.Location {
	country := a.country
	if cc := gazetteer.CountryCode(country); cc != "" {
		country = gazetteer.CountryName(cc)
	}
	town := joinNonEmpty(" ", a.postalCode, a.locality)
	region := a.region
	if gazetteer.Fold(region) == gazetteer.Fold(a.locality) {
		// City states (Berlin, Hamburg, Wien) are their own region.
		region = ""
	}
	loc := &domain.Location{
		Coordinates:    coords,
		Online:         online,
		DisplayAddress: joinNonEmpty(", ", a.venue, a.street, town, region, country),
		Locality:       a.locality,
		Region:         a.region,
		Country:        country,
	}
	if a.venue != "" {
		loc.Venue = &domain.Venue{Name: a.venue}
		// A town alone is no address of the venue: it is in locality.
		if a.street != "" {
			loc.Venue.Address = joinNonEmpty(", ", a.street, town)
		}
	}
	if loc.DisplayAddress == "" && coords == nil && online == nil {
		return nil
	}
	return loc
}

// parseAddressText reads an address written as one line (an iCalendar
// LOCATION, a schema.org location given as text): "Venue, Street 1, 10115
// Berlin, Germany". The country is the last part when it names one; the
// locality the last part the gazetteer knows as a city; the venue the
// first part when it is neither.
func parseAddressText(s string) address {
	s = strings.NewReplacer(`\n`, ", ", "\n", ", ", ";", ",").Replace(s)
	var parts []string
	for _, p := range strings.Split(s, ",") {
		if p = extract.Clean(p); p != "" {
			parts = append(parts, p)
		}
	}
	var a address
	if len(parts) == 0 {
		return a
	}
	if cc := gazetteer.CountryCode(parts[len(parts)-1]); cc != "" && len(parts) > 1 {
		a.country = parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	city := -1
	for i := len(parts) - 1; i >= 0 && city < 0; i-- {
		c, ok := gazetteer.Lookup(parts[i], gazetteer.CountryCode(a.country))
		if !ok {
			continue
		}
		city = i
		a.postalCode, a.locality = splitPostalCode(parts[i])
		if a.country == "" && i > 0 {
			a.country = c.Country
		}
	}
	rest := parts
	if city >= 0 {
		rest = parts[:city]
	}
	if len(rest) > 0 {
		a.venue = rest[0]
		a.street = strings.Join(rest[1:], ", ")
	}
	return a
}

// splitPostalCode separates "10115 Berlin" into its postal code and town.
func splitPostalCode(s string) (postal, town string) {
	f := strings.Fields(s)
	if len(f) > 1 && strings.IndexFunc(f[0], func(r rune) bool { return r < '0' || r > '9' }) < 0 {
		return f[0], strings.Join(f[1:], " ")
	}
	return "", s
}

// platforms name the online services events are held on, by host.
var platforms = map[string]string{
	"zoom.us": "Zoom", "zoom.com": "Zoom", "meet.google.com": "Google Meet", "teams.microsoft.com": "Microsoft Teams",
	"teams.live.com": "Microsoft Teams", "youtube.com": "YouTube", "youtu.be": "YouTube", "twitch.tv": "Twitch",
	"meetup.com": "Meetup", "webex.com": "Webex", "facebook.com": "Facebook", "vimeo.com": "Vimeo",
	"gotomeeting.com": "GoTo Meeting", "goto.com": "GoTo Meeting", "meet.jit.si": "Jitsi", "discord.gg": "Discord",
	"discord.com": "Discord", "hopin.com": "Hopin", "crowdcast.io": "Crowdcast", "linkedin.com": "LinkedIn",
}

// onlineAt is the online place at a URL, its platform named by the URL's
// host (or its registrable tail, so us02web.zoom.us is Zoom), else the
// given name, else the host.
func onlineAt(raw, name string) *domain.Online {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	for h := host; h != ""; {
		if p, ok := platforms[h]; ok {
			return &domain.Online{Platform: p, URL: raw}
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			break
		}
		h = h[i+1:]
	}
	return &domain.Online{Platform: cmp.Or(name, host), URL: raw}
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		dup := false
		for _, o := range out {
			if strings.EqualFold(o, p) {
				dup = true
			}
		}
		if !dup {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }
