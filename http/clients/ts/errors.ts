// The walkthrough's typed error: the package's (@feedsvc/client,
// package/src/errors.ts), and refused, which only a test needs.
import { FeedsvcError, ok, type ApiErrorBody } from "./package/src/errors.js";

export { FeedsvcError, ok, toError, type ApiErrorBody } from "./package/src/errors.js";

/** The FeedsvcError an answer must be. */
export function refused<T, E extends ApiErrorBody>(r: { data?: T; error?: E; response: Response }): FeedsvcError {
  try {
    ok(r);
  } catch (e) {
    if (e instanceof FeedsvcError) {
      return e;
    }
    throw e;
  }
  throw new Error(`feedsvc: answered ${r.response.status}, want an error`);
}
