package domain

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// happeningNamespace derives happening ids from identities, so the same happening
// found twice (two pages, a page and its .ics, a re-crawl) is one eventId
// without a lookup.
var happeningNamespace = uuid.MustParse("0b7c6a5e-6f7d-4c59-9a8e-2f1d3c4b5a69")

// HappeningID is the id of the happening with an identity.
func HappeningID(identity string) uuid.UUID {
	return uuid.NewSHA1(happeningNamespace, []byte(identity))
}

// HappeningStream is the stream of one happening, shared by every feed.
func HappeningStream(id uuid.UUID) string { return "event-" + id.String() }

// HappeningDiscovered: a happening was found for the first time, through a source.
type HappeningDiscovered struct {
	HappeningID uuid.UUID        `json:"eventId"`
	SourceID    uuid.UUID        `json:"sourceId"`
	Details     HappeningDetails `json:"details"`
	At          time.Time        `json:"at"`
}

// HappeningChanged: a later finding of a known happening differs (a new date, a
// cancellation, a new exception). Details are the whole new state.
type HappeningChanged struct {
	HappeningID uuid.UUID        `json:"eventId"`
	SourceID    uuid.UUID        `json:"sourceId"`
	Details     HappeningDetails `json:"details"`
	At          time.Time        `json:"at"`
}

// A happening's stored event names (EventDiscovered, EventChanged), its
// stream prefix (event-) and the JSON member eventId were written before
// the Go names said "happening"; what the log holds keeps its names.
func (HappeningDiscovered) EventType() string { return "EventDiscovered" }
func (HappeningChanged) EventType() string    { return "EventChanged" }

func init() {
	register(func() Event { return &HappeningDiscovered{} })
	register(func() Event { return &HappeningChanged{} })
}

// Happening is one calendar thing (a concert, a class, a match) as every
// feed shares it, folded from HappeningDiscovered and HappeningChanged.
type Happening struct {
	id      uuid.UUID
	details HappeningDetails
	exists  bool
	// changedAt is when it was discovered or last changed.
	changedAt time.Time
}

// Apply folds a stored or decided event.
func (c *Happening) Apply(e Event) {
	switch ev := e.(type) {
	case HappeningDiscovered:
		c.id, c.details, c.exists, c.changedAt = ev.HappeningID, ev.Details, true, ev.At
	case HappeningChanged:
		c.details, c.changedAt = ev.Details, ev.At
	}
}

// ID is the happening's id; Details its current state.
func (c *Happening) ID() uuid.UUID             { return c.id }
func (c *Happening) Details() HappeningDetails { return c.details }
func (c *Happening) Exists() bool              { return c.exists }
func (c *Happening) Found() HappeningDiscovered {
	return HappeningDiscovered{HappeningID: c.id, Details: c.details, At: c.changedAt}
}

// LastEnd is when the happening's last known occurrence ends (or starts, when
// it has no end).
func (d HappeningDetails) LastEnd() time.Time {
	var last time.Time
	for _, in := range d.Instances {
		for _, o := range in.Occurrences {
			end := o.Start
			if o.End != nil {
				end = *o.End
			}
			if end.After(last) {
				last = end
			}
		}
	}
	return last
}

// reexpandBefore: a recurring happening whose expansion ends sooner than this
// is re-expanded on its next finding, so occurrences never run out.
const reexpandBefore = 60 * 24 * time.Hour

// Discover decides what a finding of the happening through a source means:
// discovered when new, changed when it differs from what is stored (or its
// recurrences need extending), nothing otherwise. d must be normalised
// (NewHappeningDetails).
func (c *Happening) Discover(sourceID uuid.UUID, d HappeningDetails, now time.Time) []Event {
	id, d := IdentifiedHappening(d)
	if !c.exists {
		return []Event{HappeningDiscovered{HappeningID: id, SourceID: sourceID, Details: d, At: now}}
	}
	if sameHappening(c.details, d) && !c.expansionEnding(d, now) {
		return nil
	}
	return []Event{HappeningChanged{HappeningID: c.id, SourceID: sourceID, Details: d, At: now}}
}

func (c *Happening) expansionEnding(d HappeningDetails, now time.Time) bool {
	old := c.details.Horizon
	return old != nil && d.Horizon != nil && old.Before(now.Add(reexpandBefore)) && d.Horizon.After(*old)
}

// sameHappening compares two findings over the span both expanded: from the
// later of their expansion starts to the earlier of their horizons, so
// neither a longer look ahead nor a newer month's later start is a
// change. (A change to a recurring happening's instances that all lie before
// both starts goes unnoticed: they are past.)
func sameHappening(a, b HappeningDetails) bool {
	from, to := latest(a.ExpandedFrom, b.ExpandedFrom), earliest(a.Horizon, b.Horizon)
	a, b = trimTo(a, from, to), trimTo(b, from, to)
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

func earliest(a, b *time.Time) *time.Time {
	switch {
	case a == nil:
		return b
	case b == nil || a.Before(*b):
		return a
	default:
		return b
	}
}

func latest(a, b *time.Time) *time.Time {
	switch {
	case a == nil:
		return b
	case b == nil || a.After(*b):
		return a
	default:
		return b
	}
}

// trimTo keeps the instances that start within [from, to] (either end
// open when nil) and forgets how far the expansion reached.
func trimTo(d HappeningDetails, from, to *time.Time) HappeningDetails {
	d.Horizon, d.ExpandedFrom, d.Rank = nil, nil, 0
	if from == nil && to == nil {
		return d
	}
	instances := make([]HappeningInstance, 0, len(d.Instances))
	for _, in := range d.Instances {
		if len(in.Occurrences) > 0 {
			start := in.Occurrences[0].Start
			if (to != nil && start.After(*to)) || (from != nil && start.Before(*from)) {
				continue
			}
		}
		instances = append(instances, in)
	}
	d.Instances = instances
	return d
}

// IdentifiedHappening is d with the ids it has wherever it is recorded: the
// happening's own (HappeningID) and those of its instances, occurrences and geo
// locations.
func IdentifiedHappening(d HappeningDetails) (uuid.UUID, HappeningDetails) {
	id := HappeningID(d.Identity)
	return id, assignIDs(id, d)
}

// assignIDs gives instances, occurrences and geo locations ids derived
// from the happening and their stable keys, so they keep their ids across
// crawls and rebuilds.
func assignIDs(happeningID uuid.UUID, d HappeningDetails) HappeningDetails {
	d.Instances = slices.Clone(d.Instances)
	for i := range d.Instances {
		in := &d.Instances[i]
		in.ID = uuid.NewSHA1(happeningID, []byte("instance:"+in.Key))
		in.Occurrences = slices.Clone(in.Occurrences)
		for j := range in.Occurrences {
			o := &in.Occurrences[j]
			o.ID = uuid.NewSHA1(in.ID, []byte(o.Start.UTC().Format(time.RFC3339)))
		}
	}
	d.GeoLocations = slices.Clone(d.GeoLocations)
	for i := range d.GeoLocations {
		g := &d.GeoLocations[i]
		g.ID = uuid.NewSHA1(happeningID, []byte("geo:"+g.RelationType+":"+g.Description))
	}
	return d
}

// Bounds on one happening, so a hostile page or calendar cannot bloat the log.
const (
	maxHappeningInstances   = 1000
	maxHappeningOccurrences = 2000
	maxHappeningURLs        = 50
	maxIdentityBytes        = 2048
)

// NewHappeningDetails validates and bounds an extracted happening: it needs an
// identity, a title and at least one occurrence; statuses must be known;
// text is trimmed and bounded; lists are never nil.
func NewHappeningDetails(d HappeningDetails) (HappeningDetails, error) {
	if d.Identity == "" || len(d.Identity) > maxIdentityBytes {
		return HappeningDetails{}, invalid("identity", "must be 1 to 2048 bytes")
	}
	d.Title = truncateRunes(strings.TrimSpace(d.Title), maxTitleRunes)
	if d.Title == "" {
		return HappeningDetails{}, invalid("title", "is required")
	}
	d.Description = truncateRunes(strings.TrimSpace(d.Description), maxDescriptionRunes)
	d.ShortDescription = truncateRunes(strings.TrimSpace(d.ShortDescription), maxTitleRunes)
	if d.Time.Timezone == "" {
		d.Time.Timezone = "UTC"
	}
	if !knownZone(d.Time.Timezone) {
		return HappeningDetails{}, invalid("timezone", "is not an IANA time zone")
	}
	if err := checkInstances(d.Instances); err != nil {
		return HappeningDetails{}, err
	}
	d.SupportingImages = bounded(d.SupportingImages)
	d.URLs = bounded(d.URLs)
	if d.GeoLocations == nil {
		d.GeoLocations = []GeoLocation{}
	}
	return d, nil
}

func checkInstances(instances []HappeningInstance) error {
	if len(instances) == 0 || len(instances) > maxHappeningInstances {
		return invalid("instances", "must be 1 to 1000")
	}
	total := 0
	for _, in := range instances {
		if !slices.Contains(HappeningStatuses, in.Status) || in.Status == StatusCompleted {
			return invalid("status", "is not a source status")
		}
		if len(in.Occurrences) == 0 {
			return invalid("occurrences", "every instance needs one")
		}
		total += len(in.Occurrences)
	}
	if total > maxHappeningOccurrences {
		return invalid("occurrences", "must be at most 2000")
	}
	return nil
}

func bounded(list []string) []string {
	out := make([]string, 0, min(len(list), maxHappeningURLs))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" || !utf8.ValidString(s) || slices.Contains(out, s) {
			continue
		}
		if out = append(out, s); len(out) == maxHappeningURLs {
			break
		}
	}
	return out
}

// validZones remembers the zone names that loaded: time.LoadLocation reads
// the zone file on every call, and every happening found is checked. Only
// real zones are kept, so the cache is bounded by the zone database.
var validZones sync.Map

func knownZone(name string) bool {
	if _, ok := validZones.Load(name); ok {
		return true
	}
	if len(name) > 64 || name == "Local" {
		return false
	}
	if _, err := time.LoadLocation(name); err != nil {
		return false
	}
	validZones.Store(name, true)
	return true
}
