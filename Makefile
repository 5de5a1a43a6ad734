# feedsvc — common tasks. Needs Go and a PostgreSQL server reachable at
# DATABASE_URL (default postgres://postgres@127.0.0.1:5432/feedsvc).

GO ?= go

# The clients generated from the OpenAPI document, and their test against a
# real `feedsvc serve`, are a Go module of their own (http/clients/go.mod):
# the service's ./... does not reach them, so each target that builds,
# vets or tests the tree runs there too.
CLIENTS := http/clients
# The released OpenAPI document and the breaking-change check against it,
# a module of its own too (http/openapi/released/go.mod; docs/clients.md).
RELEASED := http/openapi/released

.PHONY: run test test-race fuzz bench bench-ingest bench-polling bench-freshness miniflux lint build client openapi-baseline docs-screenshot

## run: start the service (creates and migrates the database on start)
run:
	$(GO) run ./cmd/feedsvc serve

## test: the whole test suite against the local Postgres (each test makes its
## own database), the clients module's, the served OpenAPI document against
## the released one (breaking changes), then the API-latency-under-hostile-
## documents test alone, since a latency ratio needs the cores to itself
test:
	$(GO) test -count=1 -timeout 9m ./...
	cd $(CLIENTS) && $(GO) test -count=1 -timeout 9m ./...
	cd $(RELEASED) && $(GO) test -count=1 ./...
	FEEDSVC_TEST_LATENCY=1 $(GO) test -count=1 -run '^TestAPIp99WhileHostileDocumentsAreReadStaysWithinTwiceIdle$$' ./http/

## fuzz: fuzz request decoding, idempotent writes and queries (item lists,
## streams, feed outputs, the WebSub callback), FUZZTIME each (the seed
## corpus in http/testdata/fuzz also runs in `make test`)
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzRequestDecoding$$' -fuzztime $(FUZZTIME) ./http/
	$(GO) test -run '^$$' -fuzz '^FuzzIdempotentWrites$$' -fuzztime $(FUZZTIME) ./http/
	$(GO) test -run '^$$' -fuzz '^FuzzItemQuery$$' -fuzztime $(FUZZTIME) ./http/

## test-race: the suite with the race detector (slower)
test-race:
	$(GO) test -count=1 -race -timeout 15m ./...
	cd $(CLIENTS) && $(GO) test -count=1 -race -timeout 15m ./...

## bench: the quick benchmarks (see bench/README.md for the full runs and figures)
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./eventstore/ ./ingest/extract/
	bash bench/run.sh

## bench-ingest: time from attaching a generated 2,000-article site to all its
## items listed, through `feedsvc serve`, with CPU per item (bench/ingest/README.md);
## needs Postgres on this machine. INGEST_FLAGS passes flags to bench/ingest.
INGEST_FLAGS ?= -runs 3
bench-ingest: build
	$(GO) run ./bench/ingest -feedsvc bin/feedsvc $(INGEST_FLAGS)

## bench-polling: n loopback sites polled by `feedsvc serve` and by Miniflux
## side by side (bench/polling/README.md). POLLING_FLAGS passes flags to
## bench/polling.
POLLING_FLAGS ?= -n 2000 -interval 2m
bench-polling: build miniflux
	$(GO) run ./bench/polling -feedsvc bin/feedsvc -miniflux $(MINIFLUX_DIR)/miniflux $(POLLING_FLAGS)

## bench-freshness: from a page's publication to its item (in the list, on
## the live stream, by webhook) on n loopback sites publishing at random,
## `feedsvc serve` beside Miniflux's two schedulers, with the CPU of each
## and of its Postgres per 1,000 sites per hour (bench/freshness/README.md).
## FRESHNESS_FLAGS passes flags to bench/freshness; the headline runs
## are -n 1000 and -n 10000 at the default interval.
FRESHNESS_FLAGS ?= -n 1000 -interval 10m -window 1h
bench-freshness: build miniflux
	$(GO) run ./bench/freshness -feedsvc bin/feedsvc -miniflux $(MINIFLUX_DIR)/miniflux $(FRESHNESS_FLAGS)

## miniflux: Miniflux built from its source at MINIFLUX_COMMIT in
## MINIFLUX_DIR, outside the repository (an existing clone there is
## checked out, not cloned again)
MINIFLUX_DIR ?= /tmp/miniflux-src
MINIFLUX_COMMIT ?= 106cdd09
miniflux:
	test -d $(MINIFLUX_DIR) || git clone https://github.com/miniflux/v2 $(MINIFLUX_DIR)
	cd $(MINIFLUX_DIR) && git checkout -q $(MINIFLUX_COMMIT) && $(GO) build -o miniflux .

## docs-screenshot: render GET /docs of a real `feedsvc serve` in headless
## Chromium into docs/api-reference.png, failing if the page requests any
## address but the service's (needs Debian's chromium and Postgres)
docs-screenshot:
	bash docs/api-reference-screenshot.sh docs/api-reference.png

## lint: formatting and vet, of the service and of the clients module
lint:
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(GO) vet ./...
	cd $(CLIENTS) && $(GO) vet ./...
	cd $(RELEASED) && $(GO) vet ./...

## client: regenerate the Go client (http/clients/go/feedsvc/feedsvc.gen.go)
## and the npm package's types (http/clients/ts/package/src/feedsvc.gen.ts,
## needs `npm ci` in http/clients) from the document the service serves,
## after a change to http/openapi/spec
client:
	cd $(CLIENTS) && FEEDSVC_UPDATE_CLIENT=1 $(GO) test -count=1 -run '^TestTheClientIsOapiCodegensOutputForTheServedDocument$$' ./go/feedsvc/
	cd $(CLIENTS) && FEEDSVC_UPDATE_CLIENT=1 FEEDSVC_REQUIRE_NODE=1 $(GO) test -count=1 -run '^TestTheTypeScriptPackagesTypesAreOpenapiTypescriptsOutput$$' .

## openapi-baseline: release the served OpenAPI document as the baseline
## of its major version (http/openapi/released/openapi-<major>.json), after
## the breaking-change check passes; see docs/clients.md
openapi-baseline:
	cd $(RELEASED) && FEEDSVC_UPDATE_BASELINE=1 $(GO) test -count=1 -run '^TestTheServedDocumentBreaksNothingTheReleasedOneOffers$$' ./

build:
	CGO_ENABLED=0 $(GO) build -o bin/feedsvc ./cmd/feedsvc
