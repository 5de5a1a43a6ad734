package http_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

// Tests of what a hostile client sends (issue 19): bytes that are not
// text, error answers in the dialect of the path however early they are
// written, and early answers that survive a client still sending.

func TestBodiesThatAreNotUTF8TextAnswer400InTheRoutesDialectAndStoreNothing(t *testing.T) {
	h := servicetest.Start(t)
	c := as(h, h.Key)
	events := createEventFeed(t, c, map[string]any{"name": "Concerts", "description": "Live music"})["id"].(string)
	news := createFeed(t, c, "News", "d")["id"].(string)
	cases := []struct {
		name, method, path, body, code string
	}{
		{"a 0xff byte in an event feed's config.keywords", "POST", "/feeds/events", "{\"name\":\"n\",\"description\":\"d\",\"config\":{\"keywords\":[\"a\xffb\"]}}", "BAD_REQUEST"},
		{"a 0xff byte in an unknown config member", "POST", "/feeds/events", "{\"name\":\"n\",\"description\":\"d\",\"config\":{\"x\":\"\xff\"}}", "BAD_REQUEST"},
		{"a 0xff byte in a config key", "POST", "/feeds/events", "{\"name\":\"n\",\"description\":\"d\",\"config\":{\"\xff\":1}}", "BAD_REQUEST"},
		{"a 0xff byte in an event feed's name", "POST", "/feeds/events", "{\"name\":\"n\xff\",\"description\":\"d\"}", "BAD_REQUEST"},
		{"a 0xff byte in a patched config", "PATCH", "/feeds/events/" + events, "{\"config\":{\"keywords\":[\"\xff\"]}}", "BAD_REQUEST"},
		{"an unpaired surrogate escape in a config", "POST", "/feeds/events", `{"name":"n","description":"d","config":{"keywords":["\ud800x"]}}`, "BAD_REQUEST"},
		{"a lone low surrogate escape in a name", "POST", "/feeds/events", `{"name":"\udc00","description":"d"}`, "BAD_REQUEST"},
		{"a 0xff byte in a news feed's name", "POST", "/feeds/news", "{\"name\":\"\xff\",\"description\":\"d\"}", "VALIDATION_ERROR"},
		{"an overlong encoding in a news feed's description", "PATCH", "/feeds/news/" + news, "{\"description\":\"\xc0\xaf\"}", "VALIDATION_ERROR"},
		{"a 0xff byte in a webhook's url", "POST", "/webhooks", "{\"url\":\"https://hooks.example.com/\xff\",\"events\":[\"event.item_added\"]}", "VALIDATION_ERROR"},
		{"a 0xff byte in a source's domain", "POST", "/sources", "{\"sourceType\":\"site\",\"domain\":\"ex\xffample.com\"}", "VALIDATION_ERROR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(t, tc.method, tc.path, tc.body)
			wantError(t, r, http.StatusBadRequest, tc.code)
		})
	}
	// Nothing was stored or changed: the lists hold what the test created.
	if got := wantDataList(t, c.do(t, "GET", "/feeds/events", nil)); len(got) != 1 || got[0]["name"] != "Concerts" || jsonOf(got[0]["config"]) != `{"version":1}` && got[0]["config"] != nil {
		t.Fatalf("event feeds after the refused writes: %v", got)
	}
	if got := wantDataList(t, c.do(t, "GET", "/feeds/news", nil)); len(got) != 1 || got[0]["description"] != "d" {
		t.Fatalf("news feeds after the refused writes: %v", got)
	}
	if got := wantDataList(t, c.do(t, "GET", "/webhooks", nil)); len(got) != 0 {
		t.Fatalf("webhooks after the refused writes: %v", got)
	}
}

// The dialect of an error is the path's, whoever writes it: a handler,
// the body limit, the query check, authentication, or the transport when a
// body cannot be read.
func TestEveryErrorOnAnEventPathSpeaksTheEventDialect(t *testing.T) {
	h := servicetest.Start(t)
	addr := h.Listen()
	auth := "Authorization: Bearer " + h.Key
	big := strings.Repeat("x", 2<<20)
	cases := []struct {
		name, raw string
		status    int
	}{
		{"a handler's 400", request("GET /feeds/events/x HTTP/1.1", auth), 400},
		{"a repeated query parameter", request("GET /feeds/events?limit=1&limit=2 HTTP/1.1", auth), 400},
		{"a repeated parameter on a path in capitals", request("GET /FEEDS/EVENTS/?limit=1&limit=2 HTTP/1.1", auth), 400},
		{"a repeated parameter on the v0 item list", request("GET /v0/feeds/events/x/items?limit=1&limit=2 HTTP/1.1", auth), 400},
		{"two Authorization headers", request("GET /feeds/events HTTP/1.1", auth, auth), 400},
		{"a body that is not JSON", request("POST /feeds/events HTTP/1.1", auth, "Content-Length: 1") + "x", 400},
		{"a body over the limit", request("POST /feeds/events HTTP/1.1", auth, fmt.Sprintf("Content-Length: %d", len(big))) + big, 413},
		{"a compressed body", request("POST /feeds/events HTTP/1.1", auth, "Content-Encoding: gzip", "Content-Length: 2") + "{}", 415},
		{"a bad chunk", request("POST /feeds/events HTTP/1.1", auth, "Transfer-Encoding: chunked") + "zz\r\n", 400},
		{"an invalid Idempotency-Key", request("POST /feeds/events HTTP/1.1", auth, "Idempotency-Key: \xe9", "Content-Length: 2") + "{}", 400},
		{"an Idempotency-Key with a control byte", request("POST /feeds/events HTTP/1.1", auth, "Idempotency-Key: a\x01b", "Content-Length: 2") + "{}", 400},
		{"a header name with a space", request("POST /feeds/events HTTP/1.1", auth, "Bad Header: x", "Content-Length: 2") + "{}", 400},
		{"two Content-Lengths", request("POST /feeds/events/ HTTP/1.1", auth, "Content-Length: 2", "Content-Length: 3") + "{}", 400},
		{"two Host headers", request("GET /feeds/events HTTP/1.1", auth, "Host: other"), 400},
		{"a request line with an absolute target", request("GET http://feedsvc/v0/feeds/events/x/items HTTP/1.1", auth, "Bad Header: x"), 400},
		{"headers over 8 KiB", request("GET /feeds/events HTTP/1.1", auth, "X: "+strings.Repeat("a", 9000)), 431},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _, _ := exchange(t, addr, tc.raw)
			wantError(t, r, tc.status, "BAD_REQUEST")
		})
	}
	// And a news path keeps its own.
	r, _, _ := exchange(t, addr, request("POST /feeds/news HTTP/1.1", auth, "Transfer-Encoding: chunked")+"zz\r\n")
	wantError(t, r, 400, "VALIDATION_ERROR")
}

// The dialect of an answer written before any route (by the transport, to
// a head it cannot read) or by the middleware is the path's however the
// client wrote it: a request line that arrives in pieces or after empty
// lines, a path spelt with escapes, dot segments or doubled slashes, an
// absolute target that does not parse, or a request sent behind others on
// one connection (pipelined, after a body, after a 413 whose body was
// drained). The news list stays in its own.
func TestAnEventPathSpeaksTheEventDialectHoweverItsRequestIsWritten(t *testing.T) {
	h := servicetest.Start(t)
	addr := h.Listen()
	auth := "Authorization: Bearer " + h.Key
	// An unreadable header line: fasthttp refuses the head, so only the
	// bytes the connection saw name the path.
	bad := "X-No-Colon"
	big := strings.Repeat("x", (1<<20)+1000)
	created := `{"name":"pipelined","description":"d"}`
	cases := []struct {
		name  string
		parts []string // written one after the other, a moment apart
		// before is how many answers come first, to the requests sent
		// ahead on the connection.
		before int
		status int
		code   string
	}{
		{"a request line in two pieces", []string{"GET /fe", "eds/events HTTP/1.1\r\nHost: x\r\n" + bad + "\r\n\r\n"}, 0, 400, "BAD_REQUEST"},
		{"a request line whose method comes alone", []string{"G", "ET /feeds/events HTTP/1.1\r\nHost: x\r\n" + bad + "\r\n\r\n"}, 0, 400, "BAD_REQUEST"},
		{"empty lines before the request line", []string{"\r\n\r\n" + request("GET /feeds/events HTTP/1.1", auth, bad)}, 0, 400, "BAD_REQUEST"},
		{"a path with an escaped letter", []string{request("GET /feeds/%65vents HTTP/1.1", auth, bad)}, 0, 400, "BAD_REQUEST"},
		{"a path with a doubled slash", []string{request("GET //feeds//events HTTP/1.1", auth, bad)}, 0, 400, "BAD_REQUEST"},
		{"a path with a dot segment", []string{request("GET /./feeds/events/x HTTP/1.1", auth, bad)}, 0, 400, "BAD_REQUEST"},
		{"a path that climbs back", []string{request("GET /feeds/news/../events HTTP/1.1", auth, bad)}, 0, 400, "BAD_REQUEST"},
		{"a path with a fragment", []string{request("GET /feeds/events#top HTTP/1.1", auth, bad)}, 0, 400, "BAD_REQUEST"},
		{"the v0 list in capitals with an escape", []string{request("GET /V0/FEEDS/%45VENTS/x/items HTTP/1.1", auth, bad)}, 0, 400, "BAD_REQUEST"},
		{"an absolute target that does not parse", []string{request("GET h%t://feedsvc/feeds/events HTTP/1.1", auth)}, 0, 400, "BAD_REQUEST"},
		{"an invalid Host with an escaped path", []string{"GET /feeds/%65vents HTTP/1.1\r\nHost: [::1\r\n" + auth + "\r\n\r\n"}, 0, 400, "BAD_REQUEST"},
		{"headers over 8 KiB after empty lines", []string{"\r\n" + request("GET /feeds/events HTTP/1.1", auth, "X: "+strings.Repeat("a", 9000))}, 0, 431, "BAD_REQUEST"},
		{"a repeated parameter on an escaped path", []string{request("GET /feeds/%65vents?limit=1&limit=2 HTTP/1.1", auth)}, 0, 400, "BAD_REQUEST"},
		{"pipelined behind a news request", []string{request("GET /feeds/news HTTP/1.1", auth) + request("GET /feeds/events HTTP/1.1", auth, bad)}, 1, 400, "BAD_REQUEST"},
		{"pipelined behind two requests", []string{request("GET /healthz HTTP/1.1") + request("GET /feeds/news?limit=1 HTTP/1.1", auth) +
			request("GET /v0/feeds/events/x/items HTTP/1.1", auth, bad)}, 2, 400, "BAD_REQUEST"},
		{"pipelined behind a write with a body", []string{request("POST /feeds/news HTTP/1.1", auth, "Content-Type: application/json",
			fmt.Sprintf("Content-Length: %d", len(created))) + created + request("GET /feeds/events HTTP/1.1", auth, bad)}, 1, 400, "BAD_REQUEST"},
		{"behind a body over the limit, drained", []string{request("POST /feeds/news HTTP/1.1", auth, "Content-Type: application/json",
			fmt.Sprintf("Content-Length: %d", len(big))) + big + request("GET /feeds/events HTTP/1.1", auth, bad)}, 1, 400, "BAD_REQUEST"},
		{"the news list itself", []string{"GET /feeds/ne", "ws HTTP/1.1\r\nHost: x\r\n" + bad + "\r\n\r\n"}, 0, 400, "VALIDATION_ERROR"},
		{"the news list behind an event list", []string{request("GET /feeds/events HTTP/1.1", auth) + request("GET /feeds/news HTTP/1.1", auth, bad)}, 1, 400, "VALIDATION_ERROR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := dial(t, addr, "")
			for i, p := range tc.parts {
				if i > 0 {
					time.Sleep(50 * time.Millisecond) // so the parts reach the server as separate reads
				}
				if err := <-sendWhole(conn, p); err != nil {
					t.Fatalf("write: %v", err)
				}
			}
			br := bufio.NewReader(conn)
			for range tc.before {
				readAnswer(t, conn, br)
			}
			wantError(t, readAnswer(t, conn, br), tc.status, tc.code)
		})
	}
}

// A request the transport refuses while its body is still arriving (here a
// head fasthttp cannot parse, as an invalid Idempotency-Key can make it)
// is answered at once; the connection is then closed lingering, so a
// client that goes on sending its body (16 MiB: more than loopback socket buffers absorb; the probe used 1.65 MB over a network) reads the answer instead
// of a reset.
func TestAnEarlyAnswerReachesAClientThatKeepsSending(t *testing.T) {
	h := servicetest.Start(t)
	addr := h.Listen()
	body := `{"name":"` + strings.Repeat("n", 16<<20) + `","description":"d"}`
	cases := []struct{ name, header string }{
		{"an Idempotency-Key with a control byte", "Idempotency-Key: a\x01b"},
		{"a second, conflicting Content-Length", "Content-Length: 5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := dial(t, addr, "")
			sent := sendWhole(conn, request("POST /feeds/events HTTP/1.1", "Authorization: Bearer "+h.Key, tc.header,
				fmt.Sprintf("Content-Length: %d", len(body)))+body)
			// The client reads only once it has sent everything: a reset
			// arriving meanwhile would destroy the answer.
			select {
			case err := <-sent:
				if err != nil {
					t.Fatalf("the body could not be sent: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the body was not taken within 20 s")
			}
			br := bufio.NewReader(conn)
			r := readAnswer(t, conn, br)
			wantError(t, r, http.StatusBadRequest, "BAD_REQUEST")
			wantClosed(t, conn, br)
		})
	}
}
