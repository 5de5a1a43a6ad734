package projections

// Unwaited is implemented by a projector whose read model no API answer
// reads, so that a write of the API does not wait for it (D6). Every other
// projector is waited for: it declares nothing. service/projectors derives
// the list of waited projectors from it.
type Unwaited interface {
	Projector
	// Unwaited says why writes need not wait.
	Unwaited() string
}
