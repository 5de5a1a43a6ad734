package openapi

import (
	"io/fs"
	"strconv"

	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"go.yaml.in/yaml/v3"
)

func TestTheAreaFilesMergeIntoOneDocumentInTheOrderWritten(t *testing.T) {
	fsys := fstest.MapFS{
		"spec/openapi.yaml": {Data: []byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\ncomponents:\n  schemas:\n    Zed: {type: string}\n")},
		"spec/b.yaml":       {Data: []byte("paths:\n  /z: {}\n  /a: {}\ncomponents:\n  schemas:\n    Alpha: {type: integer, minimum: 1}\n")},
		"spec/a.yaml":       {Data: []byte("paths:\n  /m: {}\nwebhooks:\n  hook: {}\n")},
	}
	got, err := build(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"components":{"schemas":{"Zed":{"type":"string"},` +
		`"Alpha":{"type":"integer","minimum":1}}},"paths":{"/m":{},"/z":{},"/a":{}},"webhooks":{"hook":{}}}`
	if string(got) != want {
		t.Fatalf("merged\n%s\nwant\n%s", got, want)
	}
}

func TestAnAreaFileThatRedefinesOrMisplacesSomethingIsRefused(t *testing.T) {
	root := "openapi: 3.1.0\ncomponents:\n  schemas:\n    Uuid: {type: string}\n"
	cases := []struct {
		name, area, want string
	}{
		{"a path defined twice", "paths:\n  /a: {}\n", "paths./a is defined twice"},
		{"a component defined twice", "components:\n  schemas:\n    Uuid: {type: integer}\n", "components.schemas.Uuid is defined twice"},
		{"a member only the root may hold", "info: {title: x}\n", `"info" belongs in openapi.yaml`},
		{"a file that is not YAML", "paths: [\n", "parse spec/x.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			fsys := fstest.MapFS{
				"spec/openapi.yaml": {Data: []byte(root)},
				"spec/a.yaml":       {Data: []byte("paths:\n  /a: {}\n")},
				"spec/x.yaml":       {Data: []byte(tc.area)},
			}
			_, err := build(fsys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestTheServiceDocumentIsJSONOfOpenAPI31(t *testing.T) {
	doc, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if d.OpenAPI != "3.1.0" || len(d.Paths) == 0 {
		t.Fatalf("openapi %q with %d paths", d.OpenAPI, len(d.Paths))
	}
}

func TestHeadersEveryAnswerCarriesAreDeclaredOnEveryResponse(t *testing.T) {
	fsys := fstest.MapFS{
		"spec/openapi.yaml": {Data: []byte(`openapi: 3.1.0
x-every-answer-headers:
  X-Request-Id: {schema: {type: string}}
components:
  responses:
    Oops: {description: d}
`)},
		"spec/a.yaml": {Data: []byte(`paths:
  /a:
    get:
      responses:
        '200': {description: ok, headers: {X-Request-Id: {description: own}}}
        '500': {$ref: '#/components/responses/Oops'}
    post:
      responses:
        '201': {description: created}
`)},
	}
	got, err := build(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"openapi":"3.1.0","components":{"responses":{"Oops":{"description":"d","headers":{"X-Request-Id":{"schema":{"type":"string"}}}}}},` +
		`"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","headers":{"X-Request-Id":{"description":"own"}}},` +
		`"500":{"$ref":"#/components/responses/Oops"}}},` +
		`"post":{"responses":{"201":{"description":"created","headers":{"X-Request-Id":{"schema":{"type":"string"}}}}}}}}}`
	if string(got) != want {
		t.Fatalf("built\n%s\nwant\n%s", got, want)
	}
}

func TestWhatEveryWriteSharesIsAddedToWritesThatTakeAKeyOnly(t *testing.T) {
	fsys := fstest.MapFS{
		"spec/openapi.yaml": {Data: []byte(`openapi: 3.1.0
x-every-write:
  parameters:
    - {name: Idempotency-Key, in: header}
  answer-headers:
    Idempotent-Replayed: {schema: {const: 'true'}}
components:
  responses:
    Oops: {description: d, headers: {Retry-After: {schema: {type: string}}}}
`)},
		"spec/a.yaml": {Data: []byte(`paths:
  /a:
    get:
      responses:
        '500': {$ref: '#/components/responses/Oops'}
    post:
      responses:
        '201': {description: created}
        '500': {$ref: '#/components/responses/Oops'}
  /open:
    delete:
      security: []
      responses:
        '200': {description: ok}
`)},
	}
	got, err := build(fsys)
	if err != nil {
		t.Fatal(err)
	}
	// The write's 500 names a copy of the component that declares the
	// replay header too; the read's still names the component.
	want := `{"openapi":"3.1.0","components":{"responses":{"Oops":{"description":"d","headers":{"Retry-After":{"schema":{"type":"string"}}}},` +
		`"OopsOnWrite":{"description":"d","headers":{"Retry-After":{"schema":{"type":"string"}},"Idempotent-Replayed":{"schema":{"const":"true"}}}}}},` +
		`"paths":{"/a":{"get":{"responses":{"500":{"$ref":"#/components/responses/Oops"}}},` +
		`"post":{"responses":{"201":{"description":"created","headers":{"Idempotent-Replayed":{"schema":{"const":"true"}}}},` +
		`"500":{"$ref":"#/components/responses/OopsOnWrite"}},` +
		`"parameters":[{"name":"Idempotency-Key","in":"header"}]}},` +
		`"/open":{"delete":{"security":[],"responses":{"200":{"description":"ok"}}}}}}`
	if string(got) != want {
		t.Fatalf("built\n%s\nwant\n%s", got, want)
	}
}

// A flow mapping ({a: b, c: d}) splits a plain scalar at ", ", so prose
// written in one loses its second half to a member of its own (a
// "description" ending mid-sentence, an example gaining a bogus member).
// Prose belongs in block style or quotes.
func TestNoFlowMappingHoldsUnquotedProse(t *testing.T) {
	names, err := fs.Glob(specFiles, "spec/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		raw, err := fs.ReadFile(specFiles, name)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for _, where := range unquotedProse(&doc, false) {
			t.Errorf("%s:%d: a flow mapping holds unquoted text with spaces; quote it or use block style", name, where)
		}
	}
}

// unquotedProse is the lines of plain scalars holding a space inside a
// flow mapping at or under n.
func unquotedProse(n *yaml.Node, inFlow bool) []int {
	var lines []int
	if (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle != 0 {
		inFlow = true
	}
	if n.Kind == yaml.ScalarNode && inFlow && n.Style == 0 && strings.Contains(n.Value, " ") {
		lines = append(lines, n.Line)
	}
	for _, c := range n.Content {
		lines = append(lines, unquotedProse(c, inFlow)...)
	}
	return lines
}

// Generators type a value by its `type`: an `enum` or `const` without one
// becomes an untyped field (interface{} in Go), and a number without a
// `format` a type of the generator's choosing.
func TestEveryEnumAndConstIsTypedAndEveryNumberHasAFormat(t *testing.T) {
	doc, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	walkSchemas(d, "#", func(s map[string]any, where string) {
		_, typed := s["type"]
		_, isConst := s["const"]
		_, isEnum := s["enum"]
		if (isConst || isEnum) && !typed {
			t.Errorf("%s: an enum or const without a type", where)
		}
		if types(s)["integer"] || types(s)["number"] {
			if _, ok := s["format"]; !ok {
				t.Errorf("%s: a number without a format", where)
			}
		}
	})
}

// walkSchemas calls f on every mapping of the document but examples and
// defaults (values, not schemas) and servers (whose variables have an enum
// of strings and no type).
func walkSchemas(n any, where string, f func(map[string]any, string)) {
	switch n := n.(type) {
	case map[string]any:
		f(n, where)
		for k, v := range n {
			if k == "example" || k == "examples" || k == "default" || k == "servers" {
				continue
			}
			walkSchemas(v, where+"/"+k, f)
		}
	case []any:
		for i, v := range n {
			walkSchemas(v, where+"/"+strconv.Itoa(i), f)
		}
	}
}

// types is the set of a schema's types (`type` is a name or a list).
func types(s map[string]any) map[string]bool {
	out := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, v := range t {
			if name, ok := v.(string); ok {
				out[name] = true
			}
		}
	}
	return out
}

// openapi-typescript makes a member with a `default` required, so that a
// request body with a default in it cannot be written without the
// member. A request's defaults are said in words instead.
func TestNoRequestBodyMemberHasADefault(t *testing.T) {
	doc, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	schemas := d["components"].(map[string]any)["schemas"].(map[string]any)
	seen := map[string]bool{}
	var visit func(n any, where string)
	visit = func(n any, where string) {
		switch n := n.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if !seen[name] {
					seen[name] = true
					visit(schemas[name], ref)
				}
			}
			if _, ok := n["default"]; ok {
				t.Errorf("%s: a request body schema with a default", where)
			}
			for k, v := range n {
				if k != "example" && k != "examples" {
					visit(v, where+"/"+k)
				}
			}
		case []any:
			for i, v := range n {
				visit(v, where+"/"+strconv.Itoa(i))
			}
		}
	}
	for path, item := range d["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if op, ok := op.(map[string]any); ok && op["requestBody"] != nil {
				visit(op["requestBody"], method+" "+path)
			}
		}
	}
}
