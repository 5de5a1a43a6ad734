// @feedsvc/client: the feedsvc API's types as openapi-typescript makes
// them from the OpenAPI document (feedsvc.gen.ts, never edited by hand),
// an openapi-fetch client that sends the API key, and FeedsvcError.
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { paths } from "./feedsvc.gen.js";

export type { components, operations, paths, webhooks } from "./feedsvc.gen.js";
export { FeedsvcError, ok, toError, type ApiErrorBody } from "./errors.js";

/** The version of the API document (info.version) the types were made from, as a semantic version. */
export const version = "1.0.0";

export interface FeedsvcClientOptions extends ClientOptions {
  /** The service's address, e.g. http://localhost:8080. */
  baseUrl: string;
  /** An API key (`feedsvc keys create --org <name>`), sent as a bearer token. */
  apiKey: string;
}

export type FeedsvcClient = Client<paths>;

/** A client of every operation of the document, sending the API key with each request. */
export function createFeedsvcClient(options: FeedsvcClientOptions): FeedsvcClient {
  const { apiKey, ...rest } = options;
  const client = createClient<paths>(rest);
  client.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${apiKey}`);
      return request;
    },
  });
  return client;
}
