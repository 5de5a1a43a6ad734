package http

import (
	"github.com/gofiber/fiber/v2"

	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/keyauth"
	"github.com/feedsvc/feedsvc/internal/auth"
)

// notOffered are the capabilities whose scopes keys carry (D3) but which
// the service does not build (D12): their paths answer 501 with a message
// saying so, instead of a 404 that reads like a typo in the client.
var notOffered = []struct {
	path    string
	scope   auth.Scope
	message string
}{
	{"/factcheck", auth.ScopeFactcheck, "fact-checking is not offered by this service: it needs language models and live search, which the service does not have"},
	{"/research", auth.ScopeResearch, "deep research is not offered by this service: it needs language models and live search, which the service does not have"},
}

// outOfScope answers every method on each capability's path and below it
// with 501, to keys that hold the capability's scope (403 otherwise, as on
// any route).
func outOfScope(app *fiber.App) {
	for _, n := range notOffered {
		answer := &envelope.Error{Status: fiber.StatusNotImplemented, Code: envelope.CodeNotImplemented, Message: n.message}
		refuse := func(*fiber.Ctx) error { return answer }
		app.All(n.path, keyauth.RequireScope(n.scope), refuse)
		app.All(n.path+"/*", keyauth.RequireScope(n.scope), refuse)
	}
}
