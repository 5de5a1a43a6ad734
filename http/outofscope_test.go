package http_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/internal/auth"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// D12: fact-checking and deep research are not built; their paths say so.

func TestFactCheckingAndDeepResearchAnswer501SayingTheyAreNotOffered(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	cases := []struct{ method, path, names string }{
		{"POST", "/factcheck", "fact-checking"},
		{"GET", "/factcheck", "fact-checking"},
		{"POST", "/factcheck/claims", "fact-checking"},
		{"POST", "/research", "deep research"},
		{"GET", "/research/0198c3a2-7f00-7000-8000-000000000001", "deep research"},
		{"DELETE", "/research/jobs/1", "deep research"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path+" answers 501 NOT_IMPLEMENTED naming "+tc.names, func(t *testing.T) {
			r := h.DoWith(tc.method, tc.path, `{"claim":"x"}`, map[string]string{"Authorization": "Bearer " + h.Key})
			e := wantError(t, r, http.StatusNotImplemented, "NOT_IMPLEMENTED")
			wantKeys(t, "error", e, "code", "message")
			if msg := e["message"].(string); !strings.Contains(msg, tc.names) || !strings.Contains(msg, "not offered") {
				t.Fatalf("501 message %q does not say %s is not offered", msg, tc.names)
			}
		})
	}
	t.Run("without a key they answer 401 like every route", func(t *testing.T) {
		wantUnauthorized(t, send(t, h, "POST", "/factcheck", `{}`, nil))
	})
	t.Run("a key without the capability's scope answers 403", func(t *testing.T) {
		newsOnly := h.NewKey("acme", auth.ScopeNews)
		wantForbidden(t, as(h, newsOnly).do(t, "POST", "/research", `{}`))
		wantForbidden(t, as(h, newsOnly).do(t, "POST", "/factcheck", `{}`))
	})
	t.Run("a path that only starts like one is still a 404", func(t *testing.T) {
		wantError(t, c.do(t, "POST", "/factchecks", `{}`), http.StatusNotFound, "NOT_FOUND")
	})
}
