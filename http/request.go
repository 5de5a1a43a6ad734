package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/auth"
	"github.com/feedsvc/feedsvc/http/envelope"
)

// decodeBody reads a JSON object into dst. Wrong types, trailing data and
// non-objects are 400s that name the field, never 500s.
func decodeBody(c *fiber.Ctx, dst any) error {
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	if ct != "" && !strings.HasPrefix(ct, fiber.MIMEApplicationJSON) {
		return envelope.BadRequest("body", "Content-Type must be application/json")
	}
	body := bytes.TrimSpace(c.Body())
	if len(body) == 0 || body[0] != '{' {
		return envelope.BadRequest("body", "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return envelope.BadRequest("body", "must hold a single JSON object")
	}
	return nil
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
	raw := c.Params(name)
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return uuid.Nil, envelope.BadRequest(name, "must be a UUID")
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
	p, _ := auth.PrincipalFrom(c)
	return p.OrganizationID
}
