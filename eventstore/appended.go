package eventstore

import (
	"slices"
	"sync"
)

// appendSignal is the Appended half of a Store, shared by the
// implementations so that they wake subscribers the same way.
type appendSignal struct {
	mu        sync.Mutex
	listeners map[uint64]listener
	nextID    uint64
}

type listener struct {
	ch chan struct{}
	// types the listener is woken by; nil means every append.
	types map[string]bool
}

// Appended returns a channel that receives a value, coalesced, after each
// successful append through the store of an event of one of types (of any
// event when none are given). The channel is never closed; stop
// unregisters it and may be called more than once.
func (a *appendSignal) Appended(types ...string) (<-chan struct{}, func()) {
	l := listener{ch: make(chan struct{}, 1)}
	if len(types) > 0 {
		l.types = make(map[string]bool, len(types))
		for _, t := range types {
			l.types[t] = true
		}
	}
	a.mu.Lock()
	if a.listeners == nil {
		a.listeners = make(map[uint64]listener)
	}
	id := a.nextID
	a.nextID++
	a.listeners[id] = l
	a.mu.Unlock()
	return l.ch, func() {
		a.mu.Lock()
		delete(a.listeners, id)
		a.mu.Unlock()
	}
}

// notify signals the listeners of the appended events' types. It never
// blocks: a listener that has not consumed the last signal will reread the
// log anyway, so one pending signal is enough.
func (a *appendSignal) notify(events []EventData) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.listeners {
		if l.types != nil && !slices.ContainsFunc(events, func(e EventData) bool { return l.types[e.Type] }) {
			continue
		}
		select {
		case l.ch <- struct{}{}:
		default:
		}
	}
}
