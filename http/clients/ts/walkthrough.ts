// The README's walkthrough with the TypeScript client openapi-typescript
// and openapi-fetch make from the served document, compiled with
// tsc --strict. The clients test runs it against a real `feedsvc serve`:
//   node build/ts/ts/walkthrough.js <base URL> <API key> <site host:port>
import http from "node:http";
import type { AddressInfo } from "node:net";
import createClient from "openapi-fetch";
import type { paths } from "../build/feedsvc.js";
import { ok, refused } from "./errors.js";

const [base, key, siteHost] = process.argv.slice(2);
if (!base || !key || !siteHost) {
  throw new Error("usage: walkthrough.js <base URL> <API key> <site host:port>");
}

function expect(cond: boolean, what: string): asserts cond {
  if (!cond) {
    throw new Error(what);
  }
}

async function waitFor(what: string, cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await cond())) {
    if (Date.now() > deadline) {
      throw new Error(`waited two minutes for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

// sample:ts:client
const client = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${key}` } });
// end sample

// sample:ts:createNewsFeed
const feed = ok(await client.POST("/feeds/news", { body: { name: "Tech", description: "Technology news" } })).data;
// end sample

// sample:ts:addNewsFeedSource
const attached = ok(
  await client.POST("/feeds/news/{feedId}/sources", {
    params: { path: { feedId: feed.id } },
    body: { sourceType: "site", domain: siteHost },
  }),
).data;
// end sample

let items: { id: string }[] = [];
await waitFor("the site's articles", async () => {
  // sample:ts:listNewsItems
  const page = ok(
    await client.GET("/feeds/news/{feedId}/items", {
      params: { path: { feedId: feed.id }, query: { limit: 20, include: "source" } },
    }),
  ).data;
  // end sample
  items = page.items;
  return items.length >= 5;
});

// Poll with the cursor, two at a time, from the feed's first change.
const seen = new Set<string>();
let cursor = "";
for (let i = 0; i < 20; i++) {
  const page = ok(
    await client.GET("/feeds/news/{feedId}/items", { params: { path: { feedId: feed.id }, query: { cursor, limit: 2 } } }),
  ).data;
  page.items.forEach((it) => seen.add(it.id));
  cursor = page.pagination.nextCursor;
  if (!page.pagination.hasMore) {
    break;
  }
}
for (const it of items) {
  expect(seen.has(it.id), `polling with the cursor from the start missed item ${it.id} (saw ${seen.size})`);
}

const first = items[0];
expect(first !== undefined, "no item");
// sample:ts:giveNewsFeedback
ok(
  await client.POST("/feeds/news/{feedId}/items/{itemId}/feedback", {
    params: { path: { feedId: feed.id, itemId: first.id } },
    body: { rating: "positive", comment: "useful" },
  }),
);
// end sample

// An event feed: register the site record, attach it by id, list what is
// coming with every optional parameter left out.
// sample:ts:createEventFeed
const eventFeed = ok(
  await client.POST("/feeds/events", {
    body: { name: "Concerts", description: "Live music", config: { geo: { lat: 52.52, lng: 13.4, radiusKm: 30 } } },
  }),
).data;
// end sample
// sample:ts:createSource
const record = ok(await client.POST("/sources", { body: { sourceType: "site", domain: siteHost } })).data;
// end sample
// sample:ts:addEventFeedSource
ok(
  await client.POST("/feeds/events/{feedId}/sources", {
    params: { path: { feedId: eventFeed.id } },
    body: { sourceType: "site", sourceId: record.id },
  }),
);
// end sample
await waitFor("the site's concerts", async () => {
  // sample:ts:listEventItems
  const events = ok(await client.GET("/feeds/events/{feedId}/items", { params: { path: { feedId: eventFeed.id } } })).data;
  // end sample
  return events.items.length >= 2;
});
ok(await client.GET("/v0/feeds/events/{feedId}/items", { params: { path: { feedId: eventFeed.id } } }));

// Webhooks: subscribe a receiver, see it listed, send it a test delivery,
// unsubscribe.
const receiver = http.createServer((_req, res) => {
  res.writeHead(204).end();
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const hookURL = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
try {
  // sample:ts:createWebhook
  const hook = ok(await client.POST("/webhooks", { body: { url: hookURL, events: ["event.item_added"] } })).data;
  // end sample
  const hooks = ok(await client.GET("/webhooks")).data;
  expect(hooks.length === 1, `${hooks.length} webhooks listed, want 1`);
  const sent = ok(await client.POST("/webhooks/test", { body: { url: hookURL, event: "event.item_added", webhookId: hook.id } })).data;
  expect(sent.delivered, "the test delivery was not delivered");
  ok(await client.DELETE("/webhooks/{webhookId}", { params: { path: { webhookId: hook.id } } }));
} finally {
  receiver.close();
}

// Error cases, every one read through FeedsvcError.
// sample:ts:errors
const missing = refused(
  await client.GET("/feeds/news/{feedId}", { params: { path: { feedId: "0198f3a2-6c1e-7b3d-9a41-5e2f8c7d1b20" } } }),
);
expect(missing.status === 404 && missing.code === "NOT_FOUND", `a missing feed: ${missing.message}`);
// end sample
const blank = refused(await client.POST("/feeds/news", { body: { name: "", description: "x" } }));
expect(blank.status === 400 && blank.code === "VALIDATION_ERROR", `a nameless feed: ${blank.message}`);
const noEvents = refused(
  await client.GET("/feeds/events/{feedId}", { params: { path: { feedId: "0198f3a2-6c1e-7b3d-9a41-5e2f8c7d1b20" } } }),
);
expect(noEvents.code === "NOT_FOUND", `a missing event feed: ${noEvents.message}`);
const wrong = refused(
  await client.GET("/feeds/events/{feedId}/items", { params: { path: { feedId: eventFeed.id }, query: { since: "not a date" } } }),
);
expect(wrong.code === "BAD_REQUEST", `events since nonsense: ${wrong.message}`);
const stranger = createClient<paths>({ baseUrl: base, headers: { Authorization: "Bearer fsk_nope" } });
const denied = refused(await stranger.GET("/feeds/news"));
expect(denied.status === 401 && denied.code === "AUTHENTICATION_FAILED" && denied.message !== "", `a bad key: ${denied.message}`);

// Disable the source, delete the feed.
ok(
  await client.PATCH("/feeds/news/{feedId}/sources/{sourceId}", {
    params: { path: { feedId: feed.id, sourceId: attached.id } },
    body: { enabled: false },
  }),
);
ok(await client.DELETE("/feeds/news/{feedId}", { params: { path: { feedId: feed.id } } }));
console.log("walkthrough done");
