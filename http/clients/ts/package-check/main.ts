// A project of an integrator's own, with @feedsvc/client installed from
// its npm pack tarball (nothing else of this repository): the clients
// test copies this folder into a temporary project, writes config.ts
// (the service's address and an API key), compiles it with tsc --strict
// and runs it against a real `feedsvc serve`.
import { createFeedsvcClient, FeedsvcError, ok, version, type components } from "@feedsvc/client";
import { base, key, expectedVersion } from "./config.js";

function expect(cond: boolean, what: string): asserts cond {
  if (!cond) {
    throw new Error(what);
  }
}

expect(version === expectedVersion, `the package says version ${version}, want ${expectedVersion}`);

const client = createFeedsvcClient({ baseUrl: base, apiKey: key });

const feed: components["schemas"]["NewsFeed"] = ok(
  await client.POST("/feeds/news", { body: { name: "Packaged", description: "From @feedsvc/client" } }),
).data;

// A new feed has no items: one page, the cursor to poll from.
const page = ok(await client.GET("/feeds/news/{feedId}/items", { params: { path: { feedId: feed.id }, query: { limit: 10 } } })).data;
expect(page.items.length === 0 && !page.pagination.hasMore, `a new feed lists ${page.items.length} items`);
expect(page.pagination.nextCursor !== "", "a page gives the cursor to poll from");

// Error answers are FeedsvcErrors, in either dialect.
async function refused(answer: Promise<{ data?: unknown; error?: components["schemas"]["ApiError"]; response: Response }>): Promise<FeedsvcError> {
  try {
    ok(await answer);
  } catch (e) {
    if (e instanceof FeedsvcError) {
      return e;
    }
    throw e;
  }
  throw new Error("answered a success, want an error");
}
const missing = await refused(client.GET("/feeds/news/{feedId}", { params: { path: { feedId: "0198f3a2-6c1e-7b3d-9a41-5e2f8c7d1b20" } } }));
expect(missing.status === 404 && missing.code === "NOT_FOUND", `a missing feed: ${missing.message}`);
const stranger = createFeedsvcClient({ baseUrl: base, apiKey: "not-a-key" });
const denied = await refused(stranger.GET("/feeds/news"));
expect(denied.status === 401 && denied.code === "AUTHENTICATION_FAILED", `a bad key: ${denied.message}`);

ok(await client.DELETE("/feeds/news/{feedId}", { params: { path: { feedId: feed.id } } }));
console.log("package works");
