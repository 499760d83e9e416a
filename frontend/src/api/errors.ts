/**
 * Every failure the API client can produce, normalised to one shape so pages
 * render errors the same way whether the server answered with the documented
 * `{"error": {...}}` body, an HTML error page, or nothing at all.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** Status used for requests that never got an HTTP response. */
export const NETWORK_ERROR_STATUS = 0;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Builds an ApiError from an error response body of any shape. */
export function apiErrorFromResponse(status: number, body: unknown): ApiError {
  if (isRecord(body) && isRecord(body.error)) {
    const { code, message, details } = body.error;
    if (typeof code === "string" && typeof message === "string") {
      return new ApiError(status, code, message, isRecord(details) ? details : {});
    }
  }
  return new ApiError(status, `http_${status}`, `The server answered with HTTP ${status}.`);
}

export function apiErrorFromNetworkFailure(cause: unknown): ApiError {
  const error = new ApiError(
    NETWORK_ERROR_STATUS,
    "network_error",
    "Could not reach the server. Check your connection and try again.",
  );
  error.cause = cause;
  return error;
}

/** True when the server says the session is missing or expired. */
export function isUnauthenticated(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    (error.status === 401 || error.code === "not_authenticated" || error.code === "authentication_failed")
  );
}

/** What the person can do about a refusal, when the API says (`details.hint`). */
export function hintOf(error: unknown): string | null {
  return error instanceof ApiError && typeof error.details.hint === "string" ? error.details.hint : null;
}

/** True for a refusal that came from the Kafka cluster (its details name Kafka's error). */
export function isClusterRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && typeof error.details.kafka_error === "string";
}

/** A message fit to show a person, whatever was thrown: the API's message and what to do about it. */
export function describeError(error: unknown): string {
  const hint = hintOf(error);
  if (error instanceof Error && error.message && hint) return `${error.message} ${hint}`;
  if (error instanceof Error && error.message) {
    return error.message;
  }
  return "Something went wrong.";
}
