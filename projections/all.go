package projections

// All returns every projector the service runs, in no particular order.
func All() []Projector {
	return []Projector{Feeds{}, Sources{}, NewsItems{}, EventItems{}, Articles{}, Feedback{}, Ingestion{}, Webhooks{}, Insights{}, NegativeSources{}}
}

// Consistent returns the projectors a write of the API waits for before it
// answers (D6): the read models the API reads, and the crawler's view of
// attachments, since a disable or a delete must stop the crawling at once.
// Articles, written only by the crawler, are left out.
func Consistent() []Projector {
	return []Projector{Feeds{}, Sources{}, NewsItems{}, EventItems{}, Feedback{}, Ingestion{}, Webhooks{}, Insights{}, NegativeSources{}}
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
