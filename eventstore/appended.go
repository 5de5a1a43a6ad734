package eventstore

import "sync"

// appendSignal is the Appended half of a Store, shared by the
// implementations so that they wake subscribers the same way.
type appendSignal struct {
	mu        sync.Mutex
	listeners map[uint64]chan struct{}
	nextID    uint64
}

// Appended returns a channel that receives a value, coalesced, after each
// successful append through the store. The channel is never closed; stop
// unregisters it and may be called more than once.
func (a *appendSignal) Appended() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	a.mu.Lock()
	if a.listeners == nil {
		a.listeners = make(map[uint64]chan struct{})
	}
	id := a.nextID
	a.nextID++
	a.listeners[id] = ch
	a.mu.Unlock()
	return ch, func() {
		a.mu.Lock()
		delete(a.listeners, id)
		a.mu.Unlock()
	}
}

// notify never blocks: a listener that has not consumed the last signal
// will reread the log anyway, so one pending signal is enough.
func (a *appendSignal) notify() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ch := range a.listeners {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
