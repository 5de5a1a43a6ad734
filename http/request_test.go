package http_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Contract tests of how a request is read: methods, content types and
// encodings, repeated parameters and headers.

func TestUnknownAndLowerCaseMethodsAnswerInTheEnvelope(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feedID := createFeed(t, c, "Methods", "unknown methods")["id"].(string)
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{"get", "/feeds/news", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{"Post", "/feeds/news", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{"PROPFIND", "/feeds/news/" + feedID, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{"BREW", "/feeds/news/" + feedID + "/items", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{"PROPFIND", "/no/such/route", http.StatusNotFound, "NOT_FOUND"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path+" answers "+http.StatusText(tc.status), func(t *testing.T) {
			r := c.do(t, tc.method, tc.path, nil)
			wantError(t, r, tc.status, tc.code)
			if tc.status == http.StatusMethodNotAllowed && r.Header.Get("Allow") == "" {
				t.Fatalf("405 without an Allow header")
			}
			if strings.Contains(r.Raw, tc.method) {
				t.Fatalf("the answer echoes the method: %s", r.Raw)
			}
		})
	}
	t.Run("the feed is unchanged", func(t *testing.T) {
		if got := wantDataObject(t, c.do(t, "GET", "/feeds/news/"+feedID, nil), http.StatusOK); got["name"] != "Methods" {
			t.Fatalf("feed %s", jsonOf(got))
		}
	})
}

func TestOnlyJSONContentTypesWithAUTF8CharsetAreAccepted(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	body := `{"name":"typed","description":"content types"}`
	for _, ct := range []string{
		"application/jsonp",
		"application/json; charset=utf-16",
		"application/json; charset=latin1",
		"application/json; boundary=x",
		"application/json;charset=utf-8;charset=utf-16",
		"application/jsonx",
		"application/json-patch",
		"application/+json",
		"text/json",
		"text/plain",
		"application/json, text/plain",
		"multipart/form-data; boundary=x",
	} {
		t.Run("Content-Type "+ct+" answers 400", func(t *testing.T) {
			wantValidation(t, c.doWith(t, "POST", "/feeds/news", body, map[string]string{"Content-Type": ct}), "body")
		})
	}
	if feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil)); len(feeds) != 0 {
		t.Fatalf("refused bodies created %d feeds", len(feeds))
	}
	for _, ct := range []string{
		"application/json",
		"Application/JSON",
		"application/json; charset=utf-8",
		`application/json;charset="UTF-8"`,
		"application/merge-patch+json",
		"application/vnd.feedsvc+json; Charset=UTF-8",
	} {
		t.Run("Content-Type "+ct+" is accepted", func(t *testing.T) {
			wantDataObject(t, c.doWith(t, "POST", "/feeds/news", body, map[string]string{"Content-Type": ct}), http.StatusCreated)
		})
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zlibbed(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCompressedRequestBodiesAreRefusedWith415AndNeverDecoded(t *testing.T) {
	t.Parallel()
	h := servicetest.Start(t)
	c := as(h, h.Key)
	feed := []byte(`{"name":"packed","description":"compressed"}`)
	cases := []struct {
		name, encoding string
		body           []byte
	}{
		{"a gzip body", "gzip", gzipped(t, feed)},
		{"a deflate body", "deflate", zlibbed(t, feed)},
		{"a brotli body", "br", []byte{0x8b, 0x02, 0x80, 0x7b, 0x7d, 0x03}},
		{"two codings", "gzip, identity", gzipped(t, feed)},
		{"an unknown coding", "x-feedsvc", feed},
	}
	for _, tc := range cases {
		t.Run(tc.name+" answers 415 naming Content-Encoding", func(t *testing.T) {
			r := c.doWith(t, "POST", "/feeds/news", tc.body, map[string]string{"Content-Encoding": tc.encoding})
			e := wantError(t, r, http.StatusUnsupportedMediaType, "VALIDATION_ERROR")
			if d := wantObject(t, "error.details", e["details"]); d["field"] != "Content-Encoding" {
				t.Fatalf("415 names %v", d["field"])
			}
		})
	}
	t.Run("a 64 MiB gzip bomb costs no more than the body limit", func(t *testing.T) {
		bomb := gzipped(t, append([]byte(`{"name":"`), bytes.Repeat([]byte("a"), 64<<20)...))
		if len(bomb) > 1<<20 {
			t.Fatalf("the bomb is %d bytes, over the body limit", len(bomb))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := c.doWith(t, "POST", "/feeds/news", bomb, map[string]string{"Content-Encoding": "gzip"})
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Fatalf("answering the bomb allocated %d MiB", grew>>20)
		}
		wantError(t, r, http.StatusUnsupportedMediaType, "VALIDATION_ERROR")
	})
	t.Run("identity is no coding and is accepted", func(t *testing.T) {
		wantDataObject(t, c.doWith(t, "POST", "/feeds/news", feed, map[string]string{"Content-Encoding": "identity"}), http.StatusCreated)
	})
	t.Run("only the identity create made a feed", func(t *testing.T) {
		if feeds := wantDataList(t, c.do(t, "GET", "/feeds/news", nil)); len(feeds) != 1 {
			t.Fatalf("feeds %s", jsonOf(feeds))
		}
	})
}

func TestARepeatedQueryParameterOrAuthorizationHeaderAnswers400(t *testing.T) {
	t.Parallel()
	f := newItemFixture(t, full(1))
	c := as(f.h, f.h.Key)
	items := "/feeds/news/" + f.feedID + "/items"
	cases := []struct{ name, path, field string }{
		{"include twice", items + "?include=source&include=foo", "include"},
		{"include twice with the same value", items + "?include=source&include=source", "include"},
		{"limit twice", items + "?limit=1&limit=2", "limit"},
		{"since twice on the legacy list", "/v0" + items + "?since=2026-01-01&since=2026-01-02", "since"},
		{"include twice on a single item", items + "/" + f.items[0] + "?include=source&include=", "include"},
		{"an unknown parameter twice", items + "?x=1&x=2", "query"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" answers 400", func(t *testing.T) {
			wantValidation(t, c.do(t, "GET", tc.path, nil), tc.field)
		})
	}
	t.Run("each parameter once is fine", func(t *testing.T) {
		wantDataObject(t, c.do(t, "GET", items+"?include=source&limit=1&x=1", nil), http.StatusOK)
	})
	t.Run("two Authorization headers answer 400 even when both hold the key", func(t *testing.T) {
		for _, second := range []string{"Bearer garbage", "Bearer " + f.h.Key} {
			req := httptest.NewRequest("GET", items, nil)
			req.Header.Add("Authorization", "Bearer "+f.h.Key)
			req.Header.Add("Authorization", second)
			hh := *f.h
			hh.T = t
			resp, err := hh.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			r := responseOf(t, resp)
			wantValidation(t, r, "Authorization")
			if strings.Contains(r.Raw, f.h.Key) || strings.Contains(r.Raw, "garbage") {
				t.Fatalf("the answer echoes the header: %s", r.Raw)
			}
		}
	})
}

// responseOf reads an answer of Harness.Test, failing on anything but JSON.
func responseOf(t *testing.T, resp *http.Response) servicetest.Response {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := servicetest.Response{Status: resp.StatusCode, Raw: string(raw), Header: resp.Header}
	if err := json.Unmarshal(raw, &r.Body); err != nil {
		t.Fatalf("answer %d is not JSON: %q", resp.StatusCode, raw)
	}
	return r
}
