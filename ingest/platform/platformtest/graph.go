package platformtest

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// graphServer is what the Graph API fakes (Instagram, Facebook) share:
// the access token (Authorization: Bearer, or access_token), the error
// envelope, and rate limits answered as Graph does, with an error code
// and usage headers instead of a 429.
type graphServer struct {
	log
	token string
}

// graphError writes Graph's error envelope.
func graphError(w http.ResponseWriter, status int, code, subcode int, typ, msg string, extra map[string]any) {
	e := map[string]any{"message": msg, "type": typ, "code": code, "fbtrace_id": "AbCdEfGhIjK"}
	if subcode != 0 {
		e["error_subcode"] = subcode
	}
	for k, v := range extra {
		e[k] = v
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// admit records the request and answers what comes before the route: a
// rate limit the test set (code 4 with the business use case usage
// header), a missing or wrong token (code 190). It reports whether the
// route is to answer.
func (g *graphServer) admit(w http.ResponseWriter, r *http.Request, useCase string) bool {
	body, _ := io.ReadAll(r.Body)
	g.record(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body), At: time.Now()})
	if limited, reset := g.limit(); limited {
		minutes := max(int((time.Until(reset)+time.Minute-1)/time.Minute), 1)
		w.Header().Set("X-Business-Use-Case-Usage",
			fmt.Sprintf(`{"17841400000000001":[{"type":%q,"call_count":100,"total_cputime":40,"total_time":60,"estimated_time_to_regain_access":%d}]}`, useCase, minutes))
		w.Header().Set("X-App-Usage", `{"call_count":100,"total_cputime":40,"total_time":60}`)
		graphError(w, http.StatusForbidden, 4, 0, "OAuthException", "(#4) Application request limit reached", map[string]any{"is_transient": true})
		return false
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = r.URL.Query().Get("access_token")
	}
	switch {
	case token == "":
		graphError(w, http.StatusBadRequest, 2500, 0, "OAuthException", "An active access token must be used to query information about the current user.", nil)
		return false
	case token != g.token:
		graphError(w, http.StatusBadRequest, 190, 0, "OAuthException", "Invalid OAuth access token - Cannot parse access token", nil)
		return false
	case r.Method != http.MethodGet:
		graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "Unsupported method", nil)
		return false
	}
	return true
}

// fieldList splits a Graph fields parameter at top-level commas: nested
// {…} and (…) stay with their field.
func fieldList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '{', '(':
			depth++
		case '}', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// edge is one field of a fields parameter: its name, its modifiers
// (.limit(n), .after(c), .username(u)) and its subfields.
type edge struct {
	name      string
	modifiers map[string]string
	fields    []string
}

var modifier = regexp.MustCompile(`\.([a-z_]+)\(([^)]*)\)`)

func parseEdge(f string) edge {
	e := edge{modifiers: map[string]string{}}
	if i := strings.Index(f, "{"); i >= 0 && strings.HasSuffix(f, "}") {
		e.fields = fieldList(f[i+1 : len(f)-1])
		f = f[:i]
	}
	for _, m := range modifier.FindAllStringSubmatch(f, -1) {
		e.modifiers[m[1]] = m[2]
	}
	e.name = modifier.ReplaceAllString(f, "")
	return e
}

// pick keeps the requested fields of an object.
func pick(obj map[string]any, fields []string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		if v, ok := obj[f]; ok && v != nil && v != "" {
			out[f] = v
		}
	}
	return out
}
