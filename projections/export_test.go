package projections

// Listening reports whether r's head watch hears announced appends, for
// tests that must not append before it does.
func Listening(r *Runner) bool {
	r.watch.mu.Lock()
	defer r.watch.mu.Unlock()
	return r.watch.listening
}
