package openapi

import (
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// samples.json holds each operation's code samples by operationId: curl,
// Go and TypeScript, cut from the walkthroughs the clients test runs
// (http/clients/, docs/clients.md), which also keeps the file up to date.

// Sample is one code sample, as Redoc reads `x-codeSamples`.
type Sample struct {
	Lang   string `json:"lang"`
	Label  string `json:"label"`
	Source string `json:"source"`
}

// addSamples gives each operation named in samples its `x-codeSamples`.
func addSamples(root *yaml.Node, raw []byte) error {
	var samples map[string][]Sample
	if err := json.Unmarshal(raw, &samples); err != nil {
		return fmt.Errorf("read the code samples: %w", err)
	}
	paths := lookup(root, "paths")
	if paths == nil || len(samples) == 0 {
		return nil
	}
	for i := 1; i < len(paths.Content); i += 2 {
		for _, method := range operationMethods {
			op := lookup(paths.Content[i], method)
			if op == nil || lookup(op, "operationId") == nil {
				continue
			}
			list := samples[lookup(op, "operationId").Value]
			if len(list) == 0 {
				continue
			}
			seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for _, s := range list {
				seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
					str("lang"), str(s.Lang), str("label"), str(s.Label), str("source"), str(s.Source),
				}})
			}
			op.Content = append(op.Content, str("x-codeSamples"), seq)
		}
	}
	return nil
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
