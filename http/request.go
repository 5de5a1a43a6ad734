package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/keyauth"
)

// decodeBody reads a JSON object into dst. Wrong types, trailing data and
// non-objects are 400s that name the field, never 500s.
func decodeBody(c *fiber.Ctx, dst any) error {
	if !jsonMediaType(c.Get(fiber.HeaderContentType)) {
		return envelope.BadRequest("body", "Content-Type must be application/json (or application/*+json) with no charset but utf-8")
	}
	raw, err := uncompressedBody(c)
	if err != nil {
		return err
	}
	body := bytes.TrimSpace(raw)
	if len(body) == 0 || body[0] != '{' {
		return envelope.BadRequest("body", "must be a JSON object")
	}
	if err := textOnly(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return envelope.BadRequest("body", "must hold a single JSON object")
	}
	return exactMembers(body, reflect.TypeOf(dst))
}

// uncompressedBody is the request's body as sent, refusing a compressed
// one: Fiber's c.Body() decodes gzip, deflate and br without a bound, so a
// body under the limit could expand to gigabytes. The raw body is bounded
// by BodyLimit. Every route that reads a body reads it through here.
func uncompressedBody(c *fiber.Ctx) ([]byte, error) {
	if enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding)); enc != "" && !strings.EqualFold(enc, "identity") {
		return nil, &envelope.Error{Status: fiber.StatusUnsupportedMediaType, Message: "compressed request bodies are not accepted; send the body uncompressed",
			Field: "Content-Encoding", Issue: "must be absent or identity"}
	}
	return c.BodyRaw(), nil
}

// textOnly refuses a body that is not text every store can hold: bytes
// that are not UTF-8 (encoding/json would store them as U+FFFD in a string
// and pass them on unchanged in a json.RawMessage, which Postgres then
// refuses), and unpaired surrogate escapes, which jsonb refuses. (A NUL
// is refused by the validation of each field, which names it.) Checked once here, for every
// member of every body, so no route can store or choke on them.
func textOnly(body []byte) error {
	if !utf8.Valid(body) {
		return envelope.BadRequest("body", "must be UTF-8 text")
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 >= len(body) {
			continue
		}
		i++ // the escaped character: a second backslash is not an escape
		if body[i] != 'u' {
			continue
		}
		r, ok := hexRune(body[i+1:])
		switch {
		case !ok:
			continue // not an escape encoding/json reads; it refuses it itself
		case utf16.IsSurrogate(r):
			next, ok := hexRune(body[min(i+7, len(body)):])
			if r >= 0xdc00 || !ok || i+6 >= len(body) || body[i+5] != '\\' || body[i+6] != 'u' || next < 0xdc00 || next > 0xdfff {
				return envelope.BadRequest("body", "must not contain unpaired UTF-16 surrogate escapes")
			}
			i += 10 // both escapes of the pair
			continue
		}
		i += 4
	}
	return nil
}

// hexRune reads the four hex digits of a \u escape.
func hexRune(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(n), err == nil
}

// jsonMediaType accepts application/json and application/*+json with at
// most a charset parameter naming UTF-8, the only encoding JSON exchanged
// between systems may use (RFC 8259 section 8.1). No Content-Type at all is
// taken as JSON.
func jsonMediaType(header string) bool {
	if header == "" {
		return true
	}
	mediaType, params, err := mime.ParseMediaType(header)
	if err != nil {
		return false
	}
	sub, ok := strings.CutPrefix(mediaType, "application/")
	if !ok || sub != "json" && (!strings.HasSuffix(sub, "+json") || sub == "+json") {
		return false
	}
	for name, value := range params {
		if name != "charset" || !strings.EqualFold(value, "utf-8") {
			return false
		}
	}
	return true
}

// singleValued refuses a request that repeats a query parameter or the
// Authorization header: which copy counts would be a guess, and the other
// copy silently ignored.
func singleValued(c *fiber.Ctx) error {
	if len(c.Request().Header.PeekAll(fiber.HeaderAuthorization)) > 1 {
		return envelope.BadRequest("Authorization", "must be given once")
	}
	seen := make(map[string]bool)
	repeated := ""
	c.Request().URI().QueryArgs().VisitAll(func(key, _ []byte) {
		if repeated == "" && seen[string(key)] {
			repeated = string(key)
		}
		seen[string(key)] = true
	})
	if repeated == "" {
		return c.Next()
	}
	// Only a parameter of ours is named: the field is echoed to the client.
	if !slices.Contains(itemQueryParams, repeated) && !slices.Contains(insightQueryParams, repeated) {
		repeated = "query"
	}
	return envelope.BadRequest(repeated, "must be given at most once")
}

func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return envelope.BadRequest(field, "must be of type "+jsonTypeName(typeErr.Type.Kind().String()))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return envelope.BadRequest("body", "is not valid JSON")
	}
	return envelope.BadRequest("body", "is not valid JSON")
}

func jsonTypeName(kind string) string {
	switch kind {
	case "ptr", "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int64", "float64":
		return "number"
	}
	return kind
}

// pathUUID parses a path parameter that must be a UUID (D2).
func pathUUID(c *fiber.Ctx, name string) (uuid.UUID, error) {
	return parseUUID(name, c.Params(name))
}

// parseUUID parses a value that must be a UUID in its canonical form.
func parseUUID(field, raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return uuid.Nil, envelope.BadRequest(field, "must be a UUID")
	}
	return id, nil
}

// pathUUIDs parses two path parameters: a feed and something inside it.
func pathUUIDs(c *fiber.Ctx, outer, inner string) (uuid.UUID, uuid.UUID, error) {
	a, err := pathUUID(c, outer)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	b, err := pathUUID(c, inner)
	return a, b, err
}

// organization is the caller's organization; the auth middleware ran first.
func organization(c *fiber.Ctx) uuid.UUID {
	p, _ := keyauth.PrincipalFrom(c)
	return p.OrganizationID
}

// exactMembers refuses a member whose name matches one of dst's only
// when case is ignored ("nAme"): encoding/json would take it for that
// member, while the document, and every other JSON reader, would not.
// The answer names the member as the document spells it, never the
// client's bytes. Nested objects and arrays of them are checked too.
func exactMembers(raw []byte, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return nil // not an object: the decoder's own error says so
		}
		fields := map[string]reflect.Type{}
		jsonFields(t, fields)
		for name, value := range members {
			if ft, ok := fields[name]; ok {
				if err := exactMembers(value, ft); err != nil {
					return err
				}
				continue
			}
			for known := range fields {
				if strings.EqualFold(name, known) {
					return envelope.BadRequest(known, "must be spelt "+known+" exactly (member names are case-sensitive)")
				}
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for _, item := range items {
			if err := exactMembers(item, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields adds the JSON member names of struct t (embedded structs'
// included, as encoding/json flattens them) with their types.
func jsonFields(t reflect.Type, into map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				jsonFields(ft, into)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		into[name] = f.Type
	}
}
