// The one typed error of the TypeScript client: any error answer, whatever
// its status or dialect, read through the document's ApiError union.
import type { components } from "./feedsvc.gen.js";

/** Every error body the API answers (the document's ApiError union). */
export type ApiErrorBody = components["schemas"]["ApiError"];

export class FeedsvcError extends Error {
  constructor(
    readonly status: number,
    /** `code` of the flat 401, `error.code` of every other body (docs/errors.md). */
    readonly code: string,
    message: string,
    readonly body: ApiErrorBody,
  ) {
    super(`feedsvc: ${status} ${code}: ${message}`);
  }
}

/** The error of an answer's body: the 401's is flat, every other nests. */
export function toError(status: number, body: ApiErrorBody): FeedsvcError {
  if ("code" in body) {
    return new FeedsvcError(status, body.code, body.error, body);
  }
  return new FeedsvcError(status, body.error.code, body.error.message, body);
}

// sample:ts:ok
/** The data of a success; any error answer throws a FeedsvcError. */
export function ok<T, E extends ApiErrorBody>(r: { data?: T; error?: E; response: Response }): T {
  if (r.error !== undefined) {
    throw toError(r.response.status, r.error);
  }
  if (r.data === undefined) {
    throw new Error(`feedsvc: ${r.response.status} answer without a body`);
  }
  return r.data;
}
// end sample
