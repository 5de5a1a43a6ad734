package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/auth"
)

// decodeBody reads a JSON object into dst. Wrong types, trailing data and
// non-objects are 400s that name the field, never 500s.
func decodeBody(c *fiber.Ctx, dst any) error {
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	if ct != "" && !strings.HasPrefix(ct, fiber.MIMEApplicationJSON) {
		return badRequest("body", "Content-Type must be application/json")
	}
	body := bytes.TrimSpace(c.Body())
	if len(body) == 0 || body[0] != '{' {
		return badRequest("body", "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("body", "must hold a single JSON object")
	}
	return rejectNUL(body)
}

// rejectNUL refuses a body with a U+0000 anywhere in a string: Postgres text
// and jsonb cannot store it, so accepting it would fail the write with a 500.
// The field named is the top-level member that holds it.
func rejectNUL(body []byte) error {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.ContainsRune(k, 0) || containsNUL(obj[k]) {
			return badRequest(k, "must not contain the NUL character (\\u0000)")
		}
	}
	return nil
}

func containsNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case []any:
		for _, e := range x {
			if containsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) || containsNUL(e) {
				return true
			}
		}
	}
	return false
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
		return badRequest(field, "must be of type "+jsonTypeName(typeErr.Type.Kind().String()))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("body", "is not valid JSON")
	}
	return badRequest("body", "is not valid JSON")
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
	raw := c.Params(name)
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return uuid.Nil, badRequest(name, "must be a UUID")
	}
	return id, nil
}

// organization is the caller's organization; the auth middleware ran first.
func organization(c *fiber.Ctx) uuid.UUID {
	p, _ := auth.PrincipalFrom(c)
	return p.OrganizationID
}
