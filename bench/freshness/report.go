package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// class is a set of the window's publications.
type class struct {
	name string
	in   func(p *plan, pub publication) bool
}

var classes = []class{
	{"every source", func(*plan, publication) bool { return true }},
	{"busiest tenth", func(p *plan, pub publication) bool { return p.busy[pub.site] }},
	{"other nine tenths", func(p *plan, pub publication) bool { return !p.busy[pub.site] }},
}

// stats are the delays from publication to one measure for a class.
type stats struct {
	n, missing, late int
	delays           []time.Duration // sorted, delivered only
}

func (r *result) stats(p *plan, o options, measure string, c class) stats {
	var s stats
	for _, pub := range r.pubs {
		if !c.in(p, pub) || (measure == webhook && !p.venue[pub.site]) {
			continue
		}
		s.n++
		at, ok := r.obs.at(measure, key{pub.site, pub.k})
		if !ok {
			s.missing++
			s.late++
			continue
		}
		d := at.Sub(pub.at)
		s.delays = append(s.delays, d)
		if d > o.deadline {
			s.late++
		}
	}
	slices.Sort(s.delays)
	return s
}

// quantile is the nearest-rank q-quantile, a publication never delivered
// counting as longer than any: "undelivered" when the rank falls on one.
func (s stats) quantile(q float64) string {
	if s.n == 0 {
		return "–"
	}
	i := max(0, int(math.Ceil(q*float64(s.n)))-1)
	if i >= len(s.delays) {
		return "undelivered"
	}
	return round(s.delays[i]).String()
}

func round(d time.Duration) time.Duration {
	if d < 10*time.Second && d > -10*time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func (s stats) line() string {
	if s.n == 0 {
		return "none"
	}
	return fmt.Sprintf("n %d: p50 %s, p99 %s, max %s; late %d, undelivered %d", s.n, s.quantile(0.5), s.quantile(0.99), s.quantile(1), s.late, s.missing)
}

func (s stats) cell() string {
	if s.n == 0 {
		return "–"
	}
	out := fmt.Sprintf("%s / %s / %s", s.quantile(0.5), s.quantile(0.99), s.quantile(1))
	if s.missing > 0 {
		out += fmt.Sprintf(" (%d undelivered)", s.missing)
	}
	return out
}

var measureNames = map[string]string{
	stored:  "stored (the system's own timestamp)",
	listed:  "listed (a client reading the list)",
	stream:  "live stream (SSE)",
	webhook: "webhook (event pages of venues)",
}

func (r *result) onTime(p *plan, o options) int {
	s := r.stats(p, o, listed, classes[0])
	return s.n - s.late
}

// freshnessPerCPUSecond: the window's publications listed within the
// deadline (the interval), per CPU-second of the service and its
// Postgres backends in the window.
func (r *result) freshnessPerCPUSecond(p *plan, o options) float64 {
	if r.cpu() <= 0 {
		return 0
	}
	return float64(r.onTime(p, o)) / r.cpu().Seconds()
}

// perThousandHour is CPU-seconds per 1,000 sites per hour.
func (r *result) perThousandHour(d time.Duration, o options) float64 {
	return d.Seconds() / (r.end.Sub(r.start).Hours()) / (float64(o.n) / 1000)
}

func (r *result) print(o options, p *plan) {
	win := r.end.Sub(r.start)
	fmt.Printf("\n%s (setup: attach and first poll of every source %v; window %v from %s; peak RSS %d MiB)\n",
		r.system, r.setup.Round(time.Second), win.Round(time.Second), r.start.Format("15:04:05"), r.rss>>20)
	venues := 0
	for _, pub := range r.pubs {
		if p.venue[pub.site] {
			venues++
		}
	}
	fmt.Printf("  publications in the window: %d (busiest tenth %d, other nine tenths %d; at venues %d); deliveries waited for until %v after the window\n",
		len(r.pubs), r.stats(p, o, stored, classes[1]).n, r.stats(p, o, stored, classes[2]).n, venues, r.drained.Sub(r.end).Round(time.Second))
	for _, m := range r.measures {
		fmt.Printf("  publication to %s\n", measureNames[m])
		for _, c := range classes {
			fmt.Printf("    %-18s %s\n", c.name, r.stats(p, o, m, c).line())
		}
	}
	cores := r.cpu().Seconds() / win.Seconds()
	fmt.Printf("  CPU in the window: service %.1f s + Postgres %.1f s (backends alive %.1f + exited %.1f) = %.4f cores; %.1f CPU-s per 1,000 sites per hour (service %.1f + Postgres %.1f)\n",
		r.service.Seconds(), (r.pgLive + r.pgOut).Seconds(), r.pgLive.Seconds(), r.pgOut.Seconds(), cores,
		r.perThousandHour(r.cpu(), o), r.perThousandHour(r.service, o), r.perThousandHour(r.pgLive+r.pgOut, o))
	shared := ""
	if o.together && o.sharedWeb {
		shared = " (every system's requests: the web is shared)"
	}
	fmt.Printf("  at the web%s: %s; observer's API reads %d; unmatched items %d\n", shared, r.web, r.reads, r.obs.unmatched.Load())
	fmt.Printf("  freshness per CPU-second: %d of %d listed within %v / %.1f CPU-s = %.2f\n",
		r.onTime(p, o), len(r.pubs), o.deadline, r.cpu().Seconds(), r.freshnessPerCPUSecond(p, o))
}

// summary prints the systems side by side, as a Markdown table.
func summary(o options, p *plan, rs []*result) {
	if len(rs) == 0 {
		return
	}
	head := []string{fmt.Sprintf("%d sites, interval %v", o.n, o.interval)}
	for _, r := range rs {
		head = append(head, r.system)
	}
	fmt.Printf("\n| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	row := func(name string, cell func(r *result) string) {
		cells := []string{name}
		for _, r := range rs {
			cells = append(cells, cell(r))
		}
		fmt.Printf("| %s |\n", strings.Join(cells, " | "))
	}
	row("setup (attach, first poll of every source)", func(r *result) string { return r.setup.Round(time.Second).String() })
	row("publications in the window (busiest tenth)", func(r *result) string {
		return fmt.Sprintf("%d (%d) in %v", len(r.pubs), r.stats(p, o, stored, classes[1]).n, r.end.Sub(r.start).Round(time.Second))
	})
	for _, m := range []string{listed, stored, stream, webhook} {
		for _, c := range classes {
			if m == webhook && c.name != classes[0].name {
				continue
			}
			row(fmt.Sprintf("%s, %s: p50 / p99 / max", measureNames[m], c.name), func(r *result) string {
				if !slices.Contains(r.measures, m) {
					return "–"
				}
				return r.stats(p, o, m, c).cell()
			})
		}
	}
	row(fmt.Sprintf("listed within %v", o.deadline), func(r *result) string {
		return fmt.Sprintf("%d of %d", r.onTime(p, o), len(r.pubs))
	})
	row("CPU, service + Postgres (cores)", func(r *result) string {
		return fmt.Sprintf("%.1f + %.1f s (%.4f)", r.service.Seconds(), (r.pgLive + r.pgOut).Seconds(), r.cpu().Seconds()/r.end.Sub(r.start).Seconds())
	})
	row("CPU-s per 1,000 sites per hour", func(r *result) string { return fmt.Sprintf("%.1f", r.perThousandHour(r.cpu(), o)) })
	row("freshness per CPU-second", func(r *result) string { return fmt.Sprintf("%.2f", r.freshnessPerCPUSecond(p, o)) })
	for _, r := range rs[1:] {
		if peer := r.freshnessPerCPUSecond(p, o); peer > 0 {
			fmt.Printf("\nratio %s/%s, freshness per CPU-second: %.2f\n", rs[0].system, r.system, rs[0].freshnessPerCPUSecond(p, o)/peer)
		} else {
			fmt.Printf("\nratio %s/%s, freshness per CPU-second: – (%s listed none on time)\n", rs[0].system, r.system, r.system)
		}
	}
}
