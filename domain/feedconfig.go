package domain

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
)

// FeedConfig is an event feed's configuration (D9): version (default 1),
// optional geo and keywords that drive relevance, and any other members,
// kept as given and echoed back.
type FeedConfig struct {
	raw      json.RawMessage
	Version  float64
	Geo      *GeoArea
	Keywords []string
}

// GeoArea is the place an event feed is about.
type GeoArea struct {
	Lat      float64 `json:"lat"`
	Lng      float64 `json:"lng"`
	RadiusKm float64 `json:"radiusKm"`
}

// maxConfigBytes bounds a stored config; it is echoed on every read.
const maxConfigBytes = 16 << 10

// DefaultFeedConfig is the config of a feed created without one.
func DefaultFeedConfig() FeedConfig {
	c, _ := ParseFeedConfig(nil)
	return c
}

// ParseFeedConfig validates a config object; absent (nil or null) is the
// default. Understood members must have their documented types; the stored
// form has version set.
func ParseFeedConfig(raw []byte) (FeedConfig, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte(`{}`)
	}
	if len(raw) > maxConfigBytes {
		return FeedConfig{}, invalid("config", "must be at most 16 KB")
	}
	var members map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &members) != nil {
		return FeedConfig{}, invalid("config", "must be an object")
	}
	c := FeedConfig{Version: 1}
	// A null geo or keywords is the member left out: the feed has none,
	// and its config is stored and echoed without it (answers hold an
	// object and an array, or nothing). As an update replaces the whole
	// config, a null there clears it.
	for _, name := range []string{"geo", "keywords"} {
		if v, ok := members[name]; ok && string(bytes.TrimSpace(v)) == "null" {
			delete(members, name)
		}
	}
	if v, ok := members["version"]; ok {
		if json.Unmarshal(v, &c.Version) != nil || c.Version < 1 || math.IsInf(c.Version, 0) {
			return FeedConfig{}, invalid("config.version", "must be a number of at least 1")
		}
	}
	if g, ok := members["geo"]; ok {
		geo, err := parseGeoArea(g)
		if err != nil {
			return FeedConfig{}, err
		}
		c.Geo = geo
	}
	for _, name := range slices.Sorted(maps.Keys(members)) { // sorted: the same body names the same field
		if strings.ContainsRune(name, 0) {
			return FeedConfig{}, invalid("config", "must not contain NUL characters")
		}
		if holdsNUL(members[name]) {
			return FeedConfig{}, invalid("config."+name, "must not contain NUL characters")
		}
	}
	if k, ok := members["keywords"]; ok {
		keywords, err := parseKeywords(k)
		if err != nil {
			return FeedConfig{}, err
		}
		c.Keywords = keywords
	}
	version, _ := json.Marshal(c.Version)
	members["version"] = version
	stored, err := json.Marshal(members)
	if err != nil {
		return FeedConfig{}, invalid("config", "must be an object")
	}
	c.raw = stored
	return c, nil
}

// holdsNUL reports whether a JSON value has a NUL (\u0000) in any string or
// object key: Postgres jsonb refuses it, so a config holding one could not
// be stored (it answered 500). Only NUL is refused, not other control
// characters: stored configs are parsed again when their events are read,
// and one holding another control character may already be in a log.
func holdsNUL(raw json.RawMessage) bool {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return false // a NUL can only be written escaped in valid JSON
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	return nulIn(v)
}

func nulIn(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case []any:
		for _, e := range v {
			if nulIn(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || nulIn(e) {
				return true
			}
		}
	}
	return false
}

func parseGeoArea(raw json.RawMessage) (*GeoArea, error) {
	var g struct{ Lat, Lng, RadiusKm *float64 }
	if json.Unmarshal(raw, &g) != nil || g.Lat == nil || g.Lng == nil || g.RadiusKm == nil {
		return nil, invalid("config.geo", "must be an object with numbers lat, lng and radiusKm")
	}
	switch {
	case *g.Lat < -90 || *g.Lat > 90:
		return nil, invalid("config.geo.lat", "must be between -90 and 90")
	case *g.Lng < -180 || *g.Lng > 180:
		return nil, invalid("config.geo.lng", "must be between -180 and 180")
	case *g.RadiusKm <= 0 || *g.RadiusKm > 20000:
		return nil, invalid("config.geo.radiusKm", "must be above 0 and at most 20000")
	}
	return &GeoArea{Lat: *g.Lat, Lng: *g.Lng, RadiusKm: *g.RadiusKm}, nil
}

const maxKeywords = 100

func parseKeywords(raw json.RawMessage) ([]string, error) {
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, invalid("config.keywords", "must be an array of strings")
	}
	if len(list) > maxKeywords {
		return nil, invalid("config.keywords", "must have at most 100 entries")
	}
	out := make([]string, 0, len(list))
	for _, k := range list {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out, nil
}

// MarshalJSON writes the stored object, unknown members included.
func (c FeedConfig) MarshalJSON() ([]byte, error) {
	if len(c.raw) == 0 {
		return []byte(`{"version":1}`), nil
	}
	return c.raw, nil
}

// UnmarshalJSON reads a stored config.
func (c *FeedConfig) UnmarshalJSON(b []byte) error {
	parsed, err := ParseFeedConfig(b)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// Equal reports whether two configs store the same object.
func (c *FeedConfig) Equal(o *FeedConfig) bool {
	if c == nil || o == nil {
		return c == o
	}
	a, _ := c.MarshalJSON()
	b, _ := o.MarshalJSON()
	return bytes.Equal(a, b)
}
