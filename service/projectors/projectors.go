// Package projectors lists the projectors the service runs and which of
// them a write of the API waits for (D6). The list (All, in
// projectors_gen.go) is derived, never kept by hand: go generate finds every
// projector type the module declares, so a new read model is one new folder
// under readmodel/ and a run of `go generate ./service/projectors`. It sits
// on the wiring floor, above the read models and ingest whose projectors it
// names.
package projectors

import "github.com/feedsvc/feedsvc/projections"

//go:generate go run ./gen

// Consistent returns the projectors a write of the API waits for before it
// answers (D6): every projector of All but those that declare themselves
// projections.Unwaited. The read models the API reads are among them, and
// so is the crawler's view of attachments, since a disable or a delete must
// stop the crawling at once.
func Consistent() []projections.Projector {
	var out []projections.Projector
	for _, p := range All() {
		if _, unwaited := p.(projections.Unwaited); !unwaited {
			out = append(out, p)
		}
	}
	return out
}

// ByName finds a projector of All by name.
func ByName(name string) (projections.Projector, bool) {
	for _, p := range All() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}
