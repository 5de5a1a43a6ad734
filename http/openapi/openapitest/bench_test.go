package openapitest_test

import (
	"net/http"
	"testing"

	"github.com/feedsvc/feedsvc/http/openapi"
	"github.com/feedsvc/feedsvc/http/openapi/openapitest"
)

// What holding every test exchange to the document costs: building the
// checker (once per test binary) and checking one exchange.

func BenchmarkBuildTheChecker(b *testing.B) {
	doc, err := openapi.JSON()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := openapitest.New(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckAnExchange(b *testing.B) {
	checker, err := openapitest.Default()
	if err != nil {
		b.Fatal(err)
	}
	auth := http.Header{"Authorization": {"Bearer fsk_aaaaaaaaaaaa_0000000000000000000000000000000000000000000000000000000000000000"}}
	json := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name string
		ex   openapitest.Exchange
	}{
		{"a feed", openapitest.Exchange{Method: "GET", Target: "/feeds/news/" + feedID, Header: auth,
			Status: 200, ResponseHeader: json, ResponseBody: []byte(good)}},
		{"a refused create", openapitest.Exchange{Method: "POST", Target: "/feeds/news", Header: auth, RequestBody: []byte(`{"name":"x"}`),
			Status: 400, ResponseHeader: json,
			ResponseBody: []byte(`{"success":false,"error":{"code":"VALIDATION_ERROR","message":"description: is required","details":{"field":"description","issue":"is required"}}}`)}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if problems := checker.Check(tc.ex); len(problems) > 0 {
					b.Fatal(problems)
				}
			}
		})
	}
}
