// Package openapitest holds the service to its OpenAPI document in tests:
// it checks a request and the answer it got against the document, with
// libopenapi-validator (OpenAPI 3.1, JSON Schema 2020-12).
//
// The rules, for every exchange a test makes:
//   - The answer must be documented: its status among the operation's
//     responses, its body valid for that response's schema, and (strictly)
//     no member or header the document does not name. A field renamed,
//     retyped or added without the document saying so fails.
//   - A request the document refuses may only be answered 4xx: the service
//     accepting what the document forbids means one of them is wrong. (A
//     request the document allows may still be refused: not every rule is
//     a schema.)
//   - A request no documented operation serves must be answered 404 or 405
//     with the route-error body; anything else is an undocumented route.
//
// servicetest runs Check on every request its harness sends, so every
// HTTP test is held to the document without asking for it.
package openapitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/responses"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi-validator/strict"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"

	"github.com/feedsvc/feedsvc/http/openapi"
)

// Checker validates exchanges against one document. It is safe for
// concurrent use.
type Checker struct {
	model *v3.Document
	// requests is lenient: members the document does not name are allowed
	// in a request, as the service ignores them.
	requests validator.Validator
	// responses is strict: an answer may hold nothing undocumented.
	responses validator.Validator
	schemas   schema_validation.SchemaValidator
	// components are the error bodies a request no operation serves may get.
	components map[string]*base.Schema
	options    *config.ValidationOptions
}

// strictIgnored are the places of an answer that may hold members the
// document does not list: an event feed's config echoes whatever members
// it was given (D9), and the document itself (GET /openapi.json) is
// described by its top-level members only; so are the nested objects of
// the log's events.
var strictIgnored = []string{
	// "**" right after the name, for members whose names need brackets
	// ($.body.paths['/feeds/news']) as well as dotted ones.
	"$.body.data.config**",
	"$.body.data[*].config**",
	// The organization's log (GET /log): the members of a calendar
	// event's details, a feed's config and a source's details, which its
	// events carry as stored, are documented as objects, not member by
	// member.
	"$.body.data.events[*].data.config**", "$.body.data.events[*].data.details**",
	"$.body.data.events[*].data.event**", "$.body.data.events[*].data.content.source**",
	"$.body.info**", "$.body.servers**", "$.body.security**", "$.body.tags**",
	"$.body.paths**", "$.body.webhooks**", "$.body.components**", "$.body.x-tagGroups**",
}

// Default is the checker of the service's own document, built once per
// test binary.
var Default = sync.OnceValues(func() (*Checker, error) {
	doc, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	return New(doc)
})

// New builds a checker of the document doc (JSON or YAML).
func New(doc []byte) (*Checker, error) {
	parsed, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("parse the OpenAPI document: %w", err)
	}
	model, err := parsed.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("build the OpenAPI model: %w", err)
	}
	// The two validators compile the same schemas: compiling them once
	// halves what every test binary pays to start checking.
	compiled, resources := cache.NewDefaultCache(), cache.NewDefaultSchemaResourceCache()
	requests, errs := validator.NewValidator(parsed, config.WithSchemaCache(compiled), config.WithSchemaResourceCache(resources))
	if len(errs) > 0 {
		return nil, fmt.Errorf("build the request validator: %w", errors.Join(errs...))
	}
	c := &Checker{
		model:    &model.Model,
		requests: requests,
		responses: validator.NewValidatorFromV3Model(&model.Model,
			config.WithStrictMode(), config.WithStrictIgnorePaths(strictIgnored...),
			config.WithSchemaCache(compiled), config.WithSchemaResourceCache(resources)),
		schemas: schema_validation.NewSchemaValidator(),
		options: config.NewValidationOptions(),
	}
	if ok, errs := c.requests.ValidateDocument(); !ok {
		return nil, fmt.Errorf("the OpenAPI document is not valid: %s", describe(errs))
	}
	c.components = map[string]*base.Schema{}
	for _, names := range unroutedAnswers {
		for _, name := range names {
			proxy := model.Model.Components.Schemas.GetOrZero(name)
			if proxy == nil {
				return nil, fmt.Errorf("the OpenAPI document has no %s schema", name)
			}
			c.components[name] = proxy.Schema()
		}
	}
	return c, nil
}

// Exchange is one request and the answer it got, bodies read.
type Exchange struct {
	Method string
	// Target is the request's path and query.
	Target      string
	Header      http.Header
	RequestBody []byte
	Status      int
	// ResponseHeader and ResponseBody are the answer's.
	ResponseHeader http.Header
	ResponseBody   []byte
}

// Check returns how ex disagrees with the document; none when it agrees.
func (c *Checker) Check(ex Exchange) []string {
	req, err := ex.request()
	if err != nil {
		return []string{err.Error()}
	}
	item, errs, template := paths.FindPath(req, c.model, c.options)
	if hasPathError(errs) {
		below, ok := c.pathBelow(req.URL.EscapedPath())
		if !ok {
			return c.checkUnrouted(ex)
		}
		// Held to the operation of the path that serves every depth, as
		// its one segment; the target keeps its query.
		ex.Target = below
		if req.URL.RawQuery != "" {
			ex.Target += "?" + req.URL.RawQuery
		}
		if req, err = ex.request(); err != nil {
			return []string{err.Error()}
		}
		item, _, template = paths.FindPath(req, c.model, c.options)
	}
	var problems []string
	if ok, errs := c.responses.ValidateHttpResponse(req, ex.response(req)); !ok {
		problems = append(problems, fmt.Sprintf("the answer %d to %s %s is not as documented: %s", ex.Status, ex.Method, ex.Target, describe(errs)))
	}
	if ok, errs := c.undeclaredHeaders(req, ex, item, template); !ok {
		problems = append(problems, fmt.Sprintf("the answer %d to %s %s has headers the document does not name: %s", ex.Status, ex.Method, ex.Target, describe(errs)))
	}
	// A fresh request: validating the answer may have read the first's body.
	if req, err = ex.request(); err != nil {
		return append(problems, err.Error())
	}
	if ok, errs := c.requests.ValidateHttpRequestSync(req); !ok && ex.Status < 400 {
		problems = append(problems, fmt.Sprintf("%s %s was answered %d, but the document refuses the request: %s", ex.Method, ex.Target, ex.Status, describe(errs)))
	}
	return problems
}

// undeclaredHeaders checks the headers of an answer whose documented
// response declares none: the validator checks headers strictly only
// where a response declares some, and an answer must not carry a header
// (a rate limit, a replay flag) that the document does not tell of.
func (c *Checker) undeclaredHeaders(req *http.Request, ex Exchange, item *v3.PathItem, template string) (bool, []*liberrors.ValidationError) {
	op := item.GetOperations().GetOrZero(strings.ToLower(ex.Method))
	if op == nil || op.Responses == nil {
		return true, nil
	}
	documented := op.Responses.Codes.GetOrZero(strconv.Itoa(ex.Status))
	if documented == nil || documented.Headers != nil {
		return true, nil
	}
	return responses.ValidateResponseHeaders(req, ex.response(req), orderedmap.New[string, *v3.Header](), template,
		strconv.Itoa(ex.Status), config.WithStrictMode())
}

// anyDepth is the extension of a path item `/prefix/{path}` that serves
// every path below /prefix, however deep: OpenAPI's templates match one
// segment each, and a route such as Fiber's `/prefix/*` answers them all.
const anyDepth = "x-any-depth"

// pathBelow finds the documented path item marked anyDepth that serves
// path, a path deeper than one segment below its prefix, and returns path
// as that item's one segment (the rest's slashes escaped).
func (c *Checker) pathBelow(path string) (string, bool) {
	for template, item := range c.model.Paths.PathItems.FromOldest() {
		prefix, ok := strings.CutSuffix(template, "/{path}")
		if !ok || item.Extensions == nil {
			continue
		}
		if flag := item.Extensions.GetOrZero(anyDepth); flag == nil || flag.Value != "true" {
			continue
		}
		rest, ok := strings.CutPrefix(path, prefix+"/")
		if !ok || !strings.Contains(rest, "/") {
			continue
		}
		return prefix + "/" + strings.ReplaceAll(rest, "/", "%2F"), true
	}
	return "", false
}

// unroutedAnswers are what the service may answer a request no operation
// serves, by status, and the bodies each may have: 404 or 405 from the
// router, or what refuses a request before its route is looked up (a
// repeated parameter, a missing key, a missing scope of the group).
var unroutedAnswers = map[int][]string{
	http.StatusNotFound:         {"NotFoundError"},
	http.StatusMethodNotAllowed: {"MethodNotAllowedError"},
	http.StatusBadRequest:       {"NewsValidationError", "EventValidationError"},
	http.StatusUnauthorized:     {"AuthenticationError"},
	http.StatusForbidden:        {"PermissionDenied"},
}

// checkUnrouted holds a request no operation serves to the answers the
// service gives to a path it does not serve.
func (c *Checker) checkUnrouted(ex Exchange) []string {
	names, ok := unroutedAnswers[ex.Status]
	if !ok {
		return []string{fmt.Sprintf("%s %s was answered %d, but the document has no such operation: document it (http/openapi/spec)", ex.Method, ex.Target, ex.Status)}
	}
	var body any
	if err := json.Unmarshal(ex.ResponseBody, &body); err != nil {
		return []string{fmt.Sprintf("the %d answer to %s %s is not JSON: %q", ex.Status, ex.Method, ex.Target, ex.ResponseBody)}
	}
	var errs []*liberrors.ValidationError
	for _, name := range names {
		ok, e := c.schemas.ValidateSchemaObject(c.components[name], body)
		if ok {
			return nil
		}
		errs = append(errs, e...)
	}
	return []string{fmt.Sprintf("the %d answer to %s %s is none of %v: %s", ex.Status, ex.Method, ex.Target, names, describe(errs))}
}

// Operations lists the document's operations as "METHOD /path".
func (c *Checker) Operations() []string {
	var out []string
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// Operation is what the document says of one operation: who may call it
// and what it may answer.
type Operation struct {
	Method, Path string
	// Security is the operation's alternatives (its own, or the
	// document's): each names the schemes it needs, with the scopes it
	// needs of each (all of them). An empty alternative needs nothing.
	Security []map[string][]string
	// Statuses are the statuses it documents.
	Statuses []int
}

// Keyed reports whether an API key is one way to call the operation, and
// the scopes each such way needs.
func (o Operation) Keyed() ([][]string, bool) {
	var ways [][]string
	for _, alt := range o.Security {
		if scopes, ok := alt["apiKey"]; ok && len(alt) == 1 {
			ways = append(ways, scopes)
		}
	}
	return ways, len(ways) > 0
}

// Open reports whether the operation may be called with no credential.
func (o Operation) Open() bool {
	return slices.ContainsFunc(o.Security, func(alt map[string][]string) bool { return len(alt) == 0 })
}

// Documents reports whether the operation documents status.
func (o Operation) Documents(status int) bool { return slices.Contains(o.Statuses, status) }

// Described lists the document's operations with their security and
// statuses, in the order of Operations.
func (c *Checker) Described() []Operation {
	var out []Operation
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			o := Operation{Method: strings.ToUpper(method), Path: path}
			security := op.Security
			if security == nil {
				security = c.model.Security
			}
			for _, req := range security {
				alt := map[string][]string{}
				if req.Requirements != nil {
					for name, scopes := range req.Requirements.FromOldest() {
						alt[name] = scopes
					}
				}
				o.Security = append(o.Security, alt)
			}
			if op.Responses != nil {
				for code := range op.Responses.Codes.FromOldest() {
					if n, err := strconv.Atoi(code); err == nil {
						o.Statuses = append(o.Statuses, n)
					}
				}
			}
			slices.Sort(o.Statuses)
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Operation) int { return strings.Compare(a.Method+" "+a.Path, b.Method+" "+b.Path) })
	return out
}

// CheckWebhook returns how a delivery of the webhook event (a name under
// the document's webhooks) disagrees with the document: its required
// headers and their forms, and its body, strictly.
func (c *Checker) CheckWebhook(event string, header http.Header, body []byte) []string {
	item := c.model.Webhooks.GetOrZero(event)
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return []string{fmt.Sprintf("the document has no webhook %q", event)}
	}
	op := item.Post
	var problems []string
	for _, p := range op.Parameters {
		if p.In != "header" || p.Schema == nil {
			continue
		}
		value := header.Get(p.Name)
		if value == "" {
			if p.Required != nil && *p.Required {
				problems = append(problems, fmt.Sprintf("the %s delivery lacks the header %s", event, p.Name))
			}
			continue
		}
		if ok, errs := c.schemas.ValidateSchemaObject(p.Schema.Schema(), value); !ok {
			problems = append(problems, fmt.Sprintf("the %s delivery's header %s is not as documented: %s", event, p.Name, describe(errs)))
		}
	}
	mt := op.RequestBody.Content.GetOrZero("application/json")
	if mt == nil || mt.Schema == nil {
		return append(problems, fmt.Sprintf("the document gives no JSON body for the webhook %q", event))
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return append(problems, fmt.Sprintf("the %s delivery's body is not JSON: %v", event, err))
	}
	schema := mt.Schema.Schema()
	if ok, errs := c.schemas.ValidateSchemaObject(schema, value); !ok {
		problems = append(problems, fmt.Sprintf("the %s delivery's body is not as documented: %s", event, describe(errs)))
	}
	strictly := strict.ValidateBody(schema, value, strict.DirectionRequest, config.NewValidationOptions(config.WithStrictMode()), 3.1)
	for _, u := range strictly.UndeclaredValues {
		problems = append(problems, fmt.Sprintf("the %s delivery's body has %s, which the document does not name", event, u.Path))
	}
	return problems
}

// CheckExamples returns every example of a request or answer body (of the
// paths and of the webhooks) that its schema refuses, or that holds a
// member its schema does not name (strictly, as answers are checked): the
// examples readers copy are held to the document too.
func (c *Checker) CheckExamples() []string {
	var problems []string
	for event, item := range c.model.Webhooks.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			if op.RequestBody != nil {
				problems = append(problems, c.mediaExamples("webhook "+event+" "+strings.ToUpper(method), op.RequestBody.Content)...)
			}
		}
	}
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			where := strings.ToUpper(method) + " " + path
			if op.RequestBody != nil {
				problems = append(problems, c.mediaExamples(where+" request", op.RequestBody.Content)...)
			}
			if op.Responses == nil {
				continue
			}
			for code, r := range op.Responses.Codes.FromOldest() {
				problems = append(problems, c.mediaExamples(where+" "+code, r.Content)...)
			}
		}
	}
	return problems
}

func (c *Checker) mediaExamples(where string, content *orderedmap.Map[string, *v3.MediaType]) []string {
	var problems []string
	for mediaType, mt := range content.FromOldest() {
		if mt.Schema == nil {
			continue
		}
		examples := map[string]*yaml.Node{}
		if mt.Example != nil {
			examples["example"] = mt.Example
		}
		for name, ex := range mt.Examples.FromOldest() {
			examples["examples."+name] = ex.Value
		}
		for name, node := range examples {
			var value any
			if err := node.Decode(&value); err != nil {
				problems = append(problems, fmt.Sprintf("%s %s %s: %v", where, mediaType, name, err))
				continue
			}
			if ok, errs := c.schemas.ValidateSchemaObject(mt.Schema.Schema(), value); !ok {
				problems = append(problems, fmt.Sprintf("%s %s %s does not match its schema: %s", where, mediaType, name, describe(errs)))
			}
			strictly := strict.ValidateBody(mt.Schema.Schema(), value, strict.DirectionResponse,
				config.NewValidationOptions(config.WithStrictMode(), config.WithStrictIgnorePaths(strictIgnored...)), 3.1)
			for _, u := range strictly.UndeclaredValues {
				problems = append(problems, fmt.Sprintf("%s %s %s has %s, which its schema does not name", where, mediaType, name, u.Path))
			}
		}
	}
	return problems
}

func hasPathError(errs []*liberrors.ValidationError) bool {
	return slices.ContainsFunc(errs, func(e *liberrors.ValidationError) bool { return e.ValidationType == helpers.PathValidation })
}

// request is ex's request, with a body that can be read (once).
func (ex Exchange) request() (*http.Request, error) {
	req, err := http.NewRequest(ex.Method, "http://feedsvc.test"+ex.Target, bytes.NewReader(ex.RequestBody))
	if err != nil {
		return nil, fmt.Errorf("rebuild %s %s: %w", ex.Method, ex.Target, err)
	}
	req.Header = ex.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if ct := req.Header.Get("Content-Type"); ct != "" {
		req.Header.Set("Content-Type", jsonSuffix(ct))
	}
	return req, nil
}

// jsonSuffix reads a media type with the +json structured syntax suffix
// (RFC 6839), which the service takes as JSON, as application/json: the
// document names the type once rather than every such type there is.
func jsonSuffix(contentType string) string {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType
	}
	sub, ok := strings.CutPrefix(mediaType, "application/")
	if !ok || !strings.HasSuffix(sub, "+json") || sub == "+json" {
		return contentType
	}
	return mime.FormatMediaType("application/json", params)
}

func (ex Exchange) response(req *http.Request) *http.Response {
	return &http.Response{
		StatusCode: ex.Status, Header: ex.ResponseHeader.Clone(), Request: req,
		Body: io.NopCloser(bytes.NewReader(ex.ResponseBody)), ContentLength: int64(len(ex.ResponseBody)),
	}
}

// describe renders validation errors for a test failure: what is wrong,
// where, and why.
func describe(errs []*liberrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s", e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			fmt.Fprintf(&b, " (%s)", e.Reason)
		}
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s", f.Error())
		}
	}
	return b.String()
}

// Transport is an http.RoundTripper that checks every exchange it carries
// against the default checker and reports each disagreement.
type Transport struct {
	Base   http.RoundTripper
	Report func(format string, args ...any)
}

// RoundTrip sends req through Base, then checks the exchange; the answer's
// body is read and handed back unread. A stream (a 2xx text/event-stream
// answer, which stays open) is checked by its head alone, and its body is
// handed back as it comes.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	header := req.Header.Clone()
	resp, err := t.Base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	var raw []byte
	if mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mediaType == "text/event-stream" && resp.StatusCode/100 == 2 {
		// What every stream opens with, for the body's schema (a string).
		raw = []byte("retry: 3000\n\n")
	} else {
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the answer: %w", err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(raw))
	}
	checker, err := Default()
	if err != nil {
		t.Report("load the OpenAPI document: %v", err)
		return resp, nil
	}
	ex := Exchange{Method: req.Method, Target: req.URL.RequestURI(), Header: header, RequestBody: body,
		Status: resp.StatusCode, ResponseHeader: resp.Header, ResponseBody: raw}
	for _, p := range checker.Check(ex) {
		t.Report("OpenAPI: %s", p)
	}
	return resp, nil
}
