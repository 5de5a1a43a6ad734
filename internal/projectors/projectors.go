package projections

// All returns every projector the service runs, in no particular order.
func All() []Projector {
	return []Projector{Feeds{}, Sources{}, NewsItems{}, EventItems{}, Articles{}, Feedback{}, Ingestion{}, Webhooks{}, Insights{}, NegativeSources{}}
}

// Unwaited is implemented by a projector whose read model no API answer
// reads, so that a write of the API does not wait for it (D6). Every other
// projector is waited for: it declares nothing.
type Unwaited interface {
	Projector
	// Unwaited says why writes need not wait.
	Unwaited() string
}

// Consistent returns the projectors a write of the API waits for before it
// answers (D6): every projector of All but those that declare themselves
// Unwaited. The read models the API reads are among them, and so is the
// crawler's view of attachments, since a disable or a delete must stop
// the crawling at once.
func Consistent() []Projector {
	var out []Projector
	for _, p := range All() {
		if _, unwaited := p.(Unwaited); !unwaited {
			out = append(out, p)
		}
	}
	return out
}

// ByName finds a projector of All by name.
func ByName(name string) (Projector, bool) {
	for _, p := range All() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}
