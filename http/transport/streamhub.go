package transport

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/readmodel/changes"
)

// streamHub wakes the live streams (stream.go) of a process when their
// feed's items change. One poller serves every open stream: each interval
// it reads, in one statement per feed kind, the latest change of every
// feed that has a stream open (ChangeWatch.LatestChanges), and wakes the
// streams of the feeds whose latest change moved. It works whichever
// process projects (FEEDSVC_ROLES): it reads the read model, the truth,
// rather than listening for a signal only an in-process projector could
// give, and it holds no connection between polls (a stream holds none
// while it waits). A wake is only a hint: the stream reads its feed's
// changes after its own cursor, which decides what it sends.
//
// The poller runs only while some stream is open.
type streamHub struct {
	watch    ChangeWatch
	interval time.Duration
	logger   *slog.Logger

	mu      sync.Mutex
	feeds   map[StreamFeed]map[*streamWaker]struct{}
	running bool
}

// StreamFeed is the feed a stream follows.
type StreamFeed struct {
	Kind domain.FeedKind
	ID   uuid.UUID
}

// ChangeWatch is what the poller reads: where the item lists of feeds of
// a kind last changed (a feed without items left out), and which of
// feeds are gone.
type ChangeWatch interface {
	LatestChanges(ctx context.Context, kind domain.FeedKind, feedIDs []uuid.UUID) (map[uuid.UUID]changes.Key, error)
	Gone(ctx context.Context, feedIDs []uuid.UUID) ([]uuid.UUID, error)
}

// streamWaker is one open stream's wake-up: a channel of one slot (wakes
// that come while one is pending merge), and the feed's latest change it
// was last woken for (the zero key at first, so a stream is woken once
// by the first poll of a feed with items, which covers a change between
// its first read and that poll).
type streamWaker struct {
	wake chan struct{}
	seen changes.Key
}

func newStreamHub(watch ChangeWatch, interval time.Duration, logger *slog.Logger) *streamHub {
	return &streamHub{watch: watch, interval: interval, logger: logger, feeds: map[StreamFeed]map[*streamWaker]struct{}{}}
}

// subscribe registers a stream of feed; its channel receives a value when
// the feed's items may have changed. The stream must call the returned
// function when it ends.
func (h *streamHub) subscribe(feed StreamFeed) (<-chan struct{}, func()) {
	w := &streamWaker{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.feeds[feed]
	if set == nil {
		set = map[*streamWaker]struct{}{}
		h.feeds[feed] = set
	}
	set[w] = struct{}{}
	if !h.running {
		h.running = true
		go h.poll()
	}
	return w.wake, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(set, w)
		// A set emptied here is the feed's current one (a new set is only
		// made once the old one is gone).
		if len(set) == 0 {
			delete(h.feeds, feed)
		}
	}
}

// poll wakes streams each interval until none is open.
func (h *streamHub) poll() {
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	failing := false
	for range tick.C {
		byKind, ok := h.watched()
		if !ok {
			return
		}
		failed := false
		// A failed poll is logged once per run of failures; streams keep
		// their keep-alives meanwhile, and the next poll makes up for it.
		report := func(err error) {
			if !failing && !failed {
				h.logger.Warn("live item streams: polling the read model failed", "err", err)
			}
			failed = true
		}
		var all []uuid.UUID
		for kind, ids := range byKind {
			all = append(all, ids...)
			ctx, cancel := context.WithTimeout(context.Background(), max(h.interval, 5*time.Second))
			latest, err := h.watch.LatestChanges(ctx, kind, ids)
			cancel()
			if err != nil {
				report(err)
				continue
			}
			h.wake(kind, latest)
		}
		// A deleted feed's items stay, so its latest change does not move:
		// its streams are woken to find it gone (their read answers not
		// found, and they end).
		ctx, cancel := context.WithTimeout(context.Background(), max(h.interval, 5*time.Second))
		gone, err := h.watch.Gone(ctx, all)
		cancel()
		if err != nil {
			report(err)
		} else {
			h.wakeGone(gone)
		}
		failing = failed
	}
}

// wakeGone wakes the streams of feeds that are gone.
func (h *streamHub) wakeGone(gone []uuid.UUID) {
	if len(gone) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range gone {
		for _, kind := range domain.FeedKinds {
			for w := range h.feeds[StreamFeed{Kind: kind, ID: id}] {
				select {
				case w.wake <- struct{}{}:
				default:
				}
			}
		}
	}
}

// watched lists the feeds with open streams by kind; false (and the
// poller marked stopped) when there are none.
func (h *streamHub) watched() (map[domain.FeedKind][]uuid.UUID, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.feeds) == 0 {
		h.running = false
		return nil, false
	}
	out := map[domain.FeedKind][]uuid.UUID{}
	for f := range h.feeds {
		out[f.Kind] = append(out[f.Kind], f.ID)
	}
	return out, true
}

// wake wakes the streams of kind's feeds whose latest change is not the
// one they were last woken for.
func (h *streamHub) wake(kind domain.FeedKind, latest map[uuid.UUID]changes.Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, k := range latest {
		for w := range h.feeds[StreamFeed{Kind: kind, ID: id}] {
			if w.seen == k {
				continue
			}
			w.seen = k
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// streamSlots bounds open streams: in all, and per API key. The counts
// are this process's (each API process holds its own streams).
type streamSlots struct {
	perKey, total int

	mu    sync.Mutex
	open  int
	byKey map[uuid.UUID]int
}

// take reserves a slot for key; which bound refused it otherwise.
func (s *streamSlots) take(key uuid.UUID) (ok, keyFull bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey[key] >= s.perKey {
		return false, true
	}
	if s.open >= s.total {
		return false, false
	}
	if s.byKey == nil {
		s.byKey = map[uuid.UUID]int{}
	}
	s.byKey[key]++
	s.open++
	return true, false
}

func (s *streamSlots) release(key uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	if s.byKey[key]--; s.byKey[key] <= 0 {
		delete(s.byKey, key)
	}
}
