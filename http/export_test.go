package http

// SetImmutable sets Fiber's Immutable setting of the apps New builds from
// now on, for the benchmark that measures it; it returns the previous one.
func SetImmutable(on bool) (was bool) {
	was, immutable = immutable, on
	return was
}
