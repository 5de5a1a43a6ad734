package main

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/feedsvc/feedsvc/bench/internal/fakeweb"
)

// rateRange is a range of publication rates, drawn log-uniformly (so that
// a range over two orders of magnitude has as many sites in each).
type rateRange struct{ lo, hi float64 } // articles per second

// parseRates reads "LO:HI/UNIT" (UNIT h or d), such as 2:8/h or
// 0.0714:3/d.
func parseRates(s string) (rateRange, error) {
	span, unit, ok := strings.Cut(s, "/")
	lo, hi, ok2 := strings.Cut(span, ":")
	per := map[string]float64{"h": 3600, "d": 86400}[unit]
	if !ok || !ok2 || per == 0 {
		return rateRange{}, fmt.Errorf("rates %q: want LO:HI/h or LO:HI/d", s)
	}
	a, err1 := strconv.ParseFloat(lo, 64)
	b, err2 := strconv.ParseFloat(hi, 64)
	if err1 != nil || err2 != nil || a <= 0 || b < a {
		return rateRange{}, fmt.Errorf("rates %q: want 0 < LO <= HI", s)
	}
	return rateRange{a / per, b / per}, nil
}

func (r rateRange) draw(rng *rand.Rand) float64 {
	return math.Exp(math.Log(r.lo) + rng.Float64()*(math.Log(r.hi)-math.Log(r.lo)))
}

// plan is the sites' publishing: each site's rate (a Poisson process) and
// whether it is a venue, the busiest tenth by rate, and every publication
// made while the web runs, with its true instant.
type plan struct {
	rates  []float64 // articles per second
	venue  []bool
	busy   []bool // in the busiest tenth
	rng    *rand.Rand
	mu     sync.Mutex
	pubs   []publication
	rngMu  sync.Mutex
	cancel chan struct{}
}

type publication struct {
	site, k int
	at      time.Time
}

// key identifies an article across the systems' answers.
type key struct{ site, k int }

func newPlan(o options) *plan {
	rng := rand.New(rand.NewPCG(o.seed, 1))
	p := &plan{rates: make([]float64, o.n), venue: make([]bool, o.n), busy: make([]bool, o.n), rng: rng, cancel: make(chan struct{})}
	// Venues are quiet sites: a venue announces a few events a week, not
	// several an hour (and feedsvc reads a source's event pages again on
	// its polls, to follow their changes).
	nBusy := int(math.Round(o.busyShare * float64(o.n)))
	nVenues := min(o.n-nBusy, int(math.Round(o.venueShare*float64(o.n))))
	order := rng.Perm(o.n)
	for j, i := range order {
		if j < nBusy {
			p.rates[i] = o.busyRates.draw(rng)
		} else {
			p.rates[i] = o.quietRates.draw(rng)
		}
		p.venue[i] = j >= nBusy && j < nBusy+nVenues
	}
	byRate := make([]int, o.n)
	for i := range byRate {
		byRate[i] = i
	}
	slices.SortFunc(byRate, func(a, b int) int {
		switch {
		case p.rates[a] > p.rates[b]:
			return -1
		case p.rates[a] < p.rates[b]:
			return 1
		}
		return a - b
	})
	for _, i := range byRate[:(o.n+9)/10] {
		p.busy[i] = true
	}
	return p
}

// history is site i's articles before now: one a month old (every site
// has a past), then its process run backwards over the history span,
// capped to what its listings show.
func (p *plan) history(now time.Time, span time.Duration, keep int) func(int) []time.Time {
	memo := map[int][]time.Time{}
	return func(i int) []time.Time {
		p.rngMu.Lock()
		defer p.rngMu.Unlock()
		// Every web of a run (one per system with -together) is the
		// same sites with the same past.
		if back, ok := memo[i]; ok {
			return slices.Clone(back)
		}
		var back []time.Time
		t := now
		for len(back) < keep {
			t = t.Add(-p.gap(i))
			if now.Sub(t) > span {
				break
			}
			back = append(back, t)
		}
		if len(back) < keep {
			back = append(back, now.Add(-30*24*time.Hour))
		}
		slices.Reverse(back)
		memo[i] = slices.Clone(back)
		return back
	}
}

// gap is an exponential wait of site i's process; p.rngMu must be held.
func (p *plan) gap(i int) time.Duration {
	return time.Duration(p.rng.ExpFloat64() / p.rates[i] * float64(time.Second))
}

// run publishes on every site at its rate until stop, recording each
// publication.
func (p *plan) run(w *fakeweb.Web, others ...*fakeweb.Web) {
	now := time.Now()
	h := &dueHeap{}
	p.rngMu.Lock()
	for i := range p.rates {
		heap.Push(h, due{i, now.Add(p.gap(i))})
	}
	p.rngMu.Unlock()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		next := (*h)[0]
		t.Reset(time.Until(next.at))
		select {
		case <-p.cancel:
			return
		case <-t.C:
		}
		k, at := w.Sites[next.site].Publish()
		for _, o := range others {
			o.Sites[next.site].PublishAt(at)
		}
		p.mu.Lock()
		p.pubs = append(p.pubs, publication{next.site, k, at})
		p.mu.Unlock()
		p.rngMu.Lock()
		(*h)[0].at = at.Add(p.gap(next.site))
		p.rngMu.Unlock()
		heap.Fix(h, 0)
	}
}

func (p *plan) stop() { close(p.cancel) }

// between are the publications from start (included) to end.
func (p *plan) between(start, end time.Time) []publication {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []publication
	for _, pub := range p.pubs {
		if !pub.at.Before(start) && pub.at.Before(end) {
			out = append(out, pub)
		}
	}
	return out
}

type due struct {
	site int
	at   time.Time
}

type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// describe is the plan in a line: the classes and their rates.
func (p *plan) describe() string {
	var busy, rest []float64
	venues := 0
	for i, r := range p.rates {
		if p.busy[i] {
			busy = append(busy, r)
		} else {
			rest = append(rest, r)
		}
		if p.venue[i] {
			venues++
		}
	}
	sum := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	}
	return fmt.Sprintf("busiest tenth %d sites, %.1f articles an hour in all (each %.2f–%.2f/h); the other %d, %.1f an hour in all (each %.3f–%.2f/day); venues %d",
		len(busy), sum(busy)*3600, slices.Min(busy)*3600, slices.Max(busy)*3600,
		len(rest), sum(rest)*3600, minOr0(rest)*86400, maxOr0(rest)*86400, venues)
}

func minOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Min(xs)
}

func maxOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}
