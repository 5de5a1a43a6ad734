package projections

// All returns every projector the service runs, in no particular order.
func All() []Projector {
	return []Projector{NewsFeeds{}, Sources{}, NewsItems{}, Articles{}, Feedback{}, Ingestion{}}
}

// API returns the projectors whose read models the API reads: the ones a
// write waits for before it answers (D6). The others (the crawler's) may
// lag a write by the time they take.
func API() []Projector {
	return []Projector{NewsFeeds{}, Sources{}, NewsItems{}, Feedback{}}
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
