package connector

import (
	"fmt"
	"slices"

	"github.com/feedsvc/feedsvc/domain"
)

// Registry finds the connector of a source type.
type Registry struct {
	byType map[domain.SourceType]Connector
}

// NewRegistry registers each connector for the source types it reads. Two
// connectors claiming one source type is a wiring mistake, reported as an
// error.
func NewRegistry(connectors ...Connector) (*Registry, error) {
	r := &Registry{byType: map[domain.SourceType]Connector{}}
	for _, c := range connectors {
		for _, t := range c.SourceTypes() {
			if _, taken := r.byType[t]; taken {
				return nil, fmt.Errorf("register connector: source type %q has two connectors", t)
			}
			r.byType[t] = c
		}
	}
	return r, nil
}

// For returns the connector of a source type; false when none reads it.
func (r *Registry) For(t domain.SourceType) (Connector, bool) {
	c, ok := r.byType[t]
	return c, ok
}

// SourceTypes are every source type some connector reads, sorted.
func (r *Registry) SourceTypes() []string {
	out := make([]string, 0, len(r.byType))
	for t := range r.byType {
		out = append(out, string(t))
	}
	slices.Sort(out)
	return out
}
