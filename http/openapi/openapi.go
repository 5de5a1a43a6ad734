// Package openapi holds the API's OpenAPI 3.1 document and serves it:
// GET /openapi.json, and GET /docs, a page that renders it with Redoc
// shipped inside the binary.
//
// The document is written as YAML, one file per area of the API in spec/
// (openapi.yaml is the root; the others add their paths, webhooks and
// components). It is merged and turned into JSON once, keeping the order
// the files give (the order readers see). The HTTP tests validate every
// request and answer they make against it (package openapitest), so a
// route or field missing here fails them.
package openapi

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed spec/*.yaml samples.json
var specFiles embed.FS

// samplesFile holds the operations' code samples (samples.go); a document
// built without it has none.
const samplesFile = "samples.json"

// rootFile is the file that holds everything but the areas' paths and
// components.
const rootFile = "openapi.yaml"

// mergeable are the top-level members an area file may add to, and how
// deep its entries sit: the entries of paths and webhooks, and of each
// section of components.
var mergeable = map[string]int{"paths": 1, "webhooks": 1, "components": 2}

// JSON is the merged document as JSON, built on first use.
var JSON = sync.OnceValues(func() ([]byte, error) { return build(specFiles) })

// build merges the YAML files of fsys's spec folder into one JSON document.
func build(fsys fs.FS) ([]byte, error) {
	names, err := fs.Glob(fsys, "spec/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list the document's files: %w", err)
	}
	root, err := readYAML(fsys, path.Join("spec", rootFile))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for _, name := range names {
		if path.Base(name) == rootFile {
			continue
		}
		area, err := readYAML(fsys, name)
		if err != nil {
			return nil, err
		}
		if err := mergeArea(root, area); err != nil {
			return nil, fmt.Errorf("merge %s: %w", name, err)
		}
	}
	// Writes first, so that the headers every answer carries reach the
	// responses a write's additions copy out of components.
	if err := addWriteAdditions(root); err != nil {
		return nil, err
	}
	if err := addCommonHeaders(root); err != nil {
		return nil, err
	}
	dropUnreferencedResponses(root)
	if samples, err := fs.ReadFile(fsys, samplesFile); err == nil {
		if err := addSamples(root, samples); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, root); err != nil {
		return nil, fmt.Errorf("render the document: %w", err)
	}
	return buf.Bytes(), nil
}

// commonHeaders is the root member that names headers every answer may
// carry (a request id, rate limits): written once, they are declared on
// every response of every operation, where readers and the tests' strict
// header check look for them. They are optional: an answer without one is
// still as documented.
const commonHeaders = "x-every-answer-headers"

// operationMethods are the members of a path item that are operations.
var operationMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func addCommonHeaders(root *yaml.Node) error {
	headers := lookup(root, commonHeaders)
	if headers == nil {
		return nil
	}
	removeMember(root, commonHeaders)
	if headers.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping of header names to headers", commonHeaders)
	}
	components := child(root, "components")
	for _, group := range []*yaml.Node{lookup(root, "paths"), lookup(root, "webhooks")} {
		if group == nil {
			continue
		}
		for i := 1; i < len(group.Content); i += 2 {
			for _, method := range operationMethods {
				op := lookup(group.Content[i], method)
				if op == nil || lookup(op, "responses") == nil {
					continue
				}
				responses := lookup(op, "responses")
				for j := 1; j < len(responses.Content); j += 2 {
					if err := declareHeaders(components, responses.Content[j], headers); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// declareHeaders adds the headers to a response, or to the component a
// response refers to, leaving any of the same name it declares itself.
func declareHeaders(components, response, headers *yaml.Node) error {
	if ref := lookup(response, "$ref"); ref != nil {
		name, ok := strings.CutPrefix(ref.Value, "#/components/responses/")
		if !ok || lookup(child(components, "responses"), name) == nil {
			return fmt.Errorf("response $ref %q names no response component", ref.Value)
		}
		response = lookup(child(components, "responses"), name)
	}
	own := child(response, "headers")
	for i := 0; i < len(headers.Content); i += 2 {
		if lookup(own, headers.Content[i].Value) == nil {
			own.Content = append(own.Content, headers.Content[i], headers.Content[i+1])
		}
	}
	return nil
}

// writeAdditions is the root member that names what every write (a POST,
// PATCH or DELETE that takes a key) shares: `parameters` it takes (an
// Idempotency-Key) and `answer-headers` any of its answers may carry (a
// replay flag). Written once, they are added to each such operation; a
// response it names by $ref is copied in place, so that the headers stay
// off the reads that name the same component.
const writeAdditions = "x-every-write"

// writeMethods are the operations writeAdditions applies to.
var writeMethods = []string{"post", "patch", "delete"}

func addWriteAdditions(root *yaml.Node) error {
	additions := lookup(root, writeAdditions)
	if additions == nil {
		return nil
	}
	removeMember(root, writeAdditions)
	if additions.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping with parameters and answer-headers", writeAdditions)
	}
	params, headers := lookup(additions, "parameters"), lookup(additions, "answer-headers")
	if params != nil && params.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s.parameters: want a sequence", writeAdditions)
	}
	if headers != nil && headers.Kind != yaml.MappingNode {
		return fmt.Errorf("%s.answer-headers: want a mapping of header names to headers", writeAdditions)
	}
	components := child(root, "components")
	paths := lookup(root, "paths")
	if paths == nil {
		return nil
	}
	for i := 1; i < len(paths.Content); i += 2 {
		for _, method := range writeMethods {
			op := lookup(paths.Content[i], method)
			if op == nil || takesNoKey(op) {
				continue
			}
			if params != nil {
				own := sequence(op, "parameters")
				own.Content = append(own.Content, params.Content...)
			}
			if err := declareOwnHeaders(components, lookup(op, "responses"), headers); err != nil {
				return err
			}
		}
	}
	return nil
}

// takesNoKey reports whether an operation says `security: []`.
func takesNoKey(op *yaml.Node) bool {
	sec := lookup(op, "security")
	return sec != nil && sec.Kind == yaml.SequenceNode && len(sec.Content) == 0
}

// declareOwnHeaders adds the headers to each of responses. A response named
// by $ref is pointed at a copy of its component that declares them too
// (`<name>OnWrite`, made once), so the component itself stays without
// them for the reads that name it, and generated clients still meet one
// named response rather than a copy per operation.
func declareOwnHeaders(components, responses, headers *yaml.Node) error {
	if responses == nil || headers == nil {
		return nil
	}
	all := child(components, "responses")
	for j := 1; j < len(responses.Content); j += 2 {
		response := responses.Content[j]
		if ref := lookup(response, "$ref"); ref != nil {
			name, ok := strings.CutPrefix(ref.Value, "#/components/responses/")
			component := lookup(all, name)
			if !ok || component == nil {
				return fmt.Errorf("response $ref %q names no response component", ref.Value)
			}
			written := name + "OnWrite"
			if lookup(all, written) == nil {
				variant := copyMapping(component)
				if own := lookup(variant, "headers"); own != nil {
					replaceMember(variant, "headers", copyMapping(own))
				}
				addHeaders(variant, headers)
				all.Content = append(all.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: written}, variant)
			}
			responses.Content[j] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "$ref"},
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "#/components/responses/" + written},
			}}
			continue
		}
		addHeaders(response, headers)
	}
	return nil
}

// addHeaders declares headers on response, leaving any of the same name it
// declares itself.
func addHeaders(response, headers *yaml.Node) {
	own := child(response, "headers")
	for i := 0; i < len(headers.Content); i += 2 {
		if lookup(own, headers.Content[i].Value) == nil {
			own.Content = append(own.Content, headers.Content[i], headers.Content[i+1])
		}
	}
}

// dropUnreferencedResponses removes the response components nothing refers
// to once the writes have their copies: a response only writes name is
// wholly copied into them, and linters rightly flag a component no one
// uses.
func dropUnreferencedResponses(root *yaml.Node) {
	responses := lookup(child(root, "components"), "responses")
	if responses == nil {
		return
	}
	used := map[string]bool{}
	collectRefs(root, used)
	kept := responses.Content[:0]
	for i := 0; i < len(responses.Content); i += 2 {
		if used["#/components/responses/"+responses.Content[i].Value] {
			kept = append(kept, responses.Content[i], responses.Content[i+1])
		}
	}
	responses.Content = kept
}

// collectRefs adds every $ref under n to refs.
func collectRefs(n *yaml.Node, refs map[string]bool) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "$ref" {
				refs[n.Content[i+1].Value] = true
			}
		}
	}
	for _, c := range n.Content {
		collectRefs(c, refs)
	}
}

// copyMapping is a mapping whose members can be changed without changing
// m's (the members' values are shared).
func copyMapping(m *yaml.Node) *yaml.Node {
	c := *m
	c.Content = slices.Clone(m.Content)
	return &c
}

func replaceMember(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
}

// sequence is m's sequence member key, added when missing.
func sequence(m *yaml.Node, key string) *yaml.Node {
	if v := lookup(m, key); v != nil {
		return v
	}
	v := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

func removeMember(m *yaml.Node, key string) {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// readYAML reads a file whose content is one YAML mapping.
func readYAML(fsys fs.FS, name string) (*yaml.Node, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want one mapping", name)
	}
	return doc.Content[0], nil
}

// mergeArea adds an area file's entries to the root. A name defined twice
// is an error rather than a silent override.
func mergeArea(root, area *yaml.Node) error {
	for i := 0; i < len(area.Content); i += 2 {
		key, value := area.Content[i].Value, area.Content[i+1]
		depth, ok := mergeable[key]
		if !ok {
			return fmt.Errorf("top-level member %q belongs in %s", key, rootFile)
		}
		if err := mergeInto(child(root, key), value, depth, key); err != nil {
			return err
		}
	}
	return nil
}

// mergeInto appends src's entries to dst; at depth 2 it merges each of
// src's mappings into dst's mapping of the same name.
func mergeInto(dst, src *yaml.Node, depth int, where string) error {
	if src.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping", where)
	}
	for i := 0; i < len(src.Content); i += 2 {
		key, value := src.Content[i], src.Content[i+1]
		name := where + "." + key.Value
		if depth > 1 {
			if err := mergeInto(child(dst, key.Value), value, depth-1, name); err != nil {
				return err
			}
			continue
		}
		if lookup(dst, key.Value) != nil {
			return fmt.Errorf("%s is defined twice", name)
		}
		dst.Content = append(dst.Content, key, value)
	}
	return nil
}

// child is m's mapping member key, added when missing.
func child(m *yaml.Node, key string) *yaml.Node {
	if v := lookup(m, key); v != nil {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// writeJSON writes a YAML node as JSON, members in the order written.
func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeString(buf, n.Content[i].Value); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, item); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	}
	return fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		out, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(out)
	default:
		// Strings, and what YAML would read as timestamps: JSON has no
		// other scalar.
		return writeString(buf, n.Value)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) error {
	out, err := json.Marshal(s)
	if err != nil {
		return err
	}
	buf.Write(out)
	return nil
}
