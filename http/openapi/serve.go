package openapi

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

var (
	//go:embed docs/index.html
	docsPage []byte
	//go:embed docs/redoc.standalone.js
	redocScript []byte
)

// Paths of what this package serves.
const (
	DocumentPath = "/openapi.json"
	DocsPath     = "/docs"
	ScriptPath   = "/docs/redoc.standalone.js"
)

// docsPolicy keeps the page to this origin: the browser itself refuses
// any request elsewhere (Redoc's footer logo on a CDN, above all). Redoc
// styles with inline style elements and runs its search in a blob worker.
const docsPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Register serves the document and the docs page on r. They take no key:
// register them before the auth middleware. fail renders a failure (the
// document not building, which the tests rule out).
func Register(r fiber.Router, fail func(error) error) {
	r.Get(DocumentPath, func(c *fiber.Ctx) error {
		doc, err := JSON()
		if err != nil {
			return fail(err)
		}
		c.Set(fiber.HeaderCacheControl, "no-cache")
		c.Type("json")
		return c.Send(doc)
	})
	r.Get(DocsPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentSecurityPolicy, docsPolicy)
		c.Set(fiber.HeaderCacheControl, "no-cache")
		c.Type("html", "utf-8")
		return c.Send(docsPage)
	})
	r.Get(ScriptPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
		c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
		return c.Send(redocScript)
	})
}
