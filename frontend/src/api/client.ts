import createClient, { type Middleware } from "openapi-fetch";

import { CSRF_COOKIE_NAME, CSRF_HEADER_NAME, needsCsrfToken, readCookie } from "./csrf";
import { apiErrorFromNetworkFailure, apiErrorFromResponse } from "./errors";
import type { paths } from "./schema";

// The token is read on every request, not cached: Django rotates it at login.
const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (needsCsrfToken(request.method)) {
      const token = readCookie(CSRF_COOKIE_NAME);
      if (token) request.headers.set(CSRF_HEADER_NAME, token);
    }
    return request;
  },
};

const networkErrorMiddleware: Middleware = {
  onError({ error }) {
    return apiErrorFromNetworkFailure(error);
  },
};

/**
 * The typed client for the control-plane API. Paths, parameters and bodies
 * are checked against `schema.d.ts`, generated from `openapi.yaml`.
 */
export const apiClient = createClient<paths>({
  // Request() needs an absolute URL outside browsers (tests), and the SPA is
  // always served from the API's origin.
  baseUrl: window.location.origin,
  credentials: "same-origin",
  headers: { Accept: "application/json" },
  // Looked up per call so a test can stub the global fetch after import.
  fetch: (request: Request) => globalThis.fetch(request),
});
apiClient.use(csrfMiddleware, networkErrorMiddleware);

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Returns the body of a successful response and throws an ApiError for any
 * other, so query and mutation functions can be one line:
 * `unwrap(await apiClient.GET("/api/v1/overview/"))`.
 */
export function unwrap<T>(result: FetchResult<T>): T {
  if (!result.response.ok) {
    throw apiErrorFromResponse(result.response.status, result.error);
  }
  return result.data as T;
}
