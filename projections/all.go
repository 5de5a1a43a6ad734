package projections

// All returns every projector the service runs, in no particular order.
func All() []Projector {
	return []Projector{NewsFeeds{}, Sources{}, NewsItems{}, Articles{}, Feedback{}, Ingestion{}}
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
