/**
 * A small typed client for the Confluent-compatible schema registry each
 * cluster serves at `/clusters/<cluster id>/schema-registry/`. It is not
 * part of the control plane's OpenAPI schema: it speaks Confluent's wire
 * format (its content type, `{"error_code", "message"}` errors, subjects
 * percent-encoded inside the path).
 */
import { CSRF_COOKIE_NAME, CSRF_HEADER_NAME, needsCsrfToken, readCookie } from "./csrf";
import { ApiError, apiErrorFromNetworkFailure } from "./errors";

export const REGISTRY_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";

export type SchemaType = "AVRO" | "JSON" | "PROTOBUF";
export type CompatibilityLevel =
  "BACKWARD" | "BACKWARD_TRANSITIVE" | "FORWARD" | "FORWARD_TRANSITIVE" | "FULL" | "FULL_TRANSITIVE" | "NONE";

export const COMPATIBILITY_LEVELS: readonly CompatibilityLevel[] = [
  "BACKWARD",
  "BACKWARD_TRANSITIVE",
  "FORWARD",
  "FORWARD_TRANSITIVE",
  "FULL",
  "FULL_TRANSITIVE",
  "NONE",
];

export interface SchemaReference {
  name: string;
  subject: string;
  version: number;
}

export interface SubjectVersion {
  subject: string;
  version: number;
  id: number;
  /** Absent for Avro, the registry's default. */
  schemaType?: SchemaType;
  schema: string;
  references?: SchemaReference[];
}

export interface SubjectConfig {
  compatibilityLevel?: CompatibilityLevel;
}

export interface CompatibilityResult {
  is_compatible: boolean;
  messages?: string[];
}

export interface SchemaInput {
  schema: string;
  schemaType?: SchemaType;
  references?: SchemaReference[];
}

/** `a/b` must travel as `a%2Fb`, one path segment. */
export function encodeSubject(subject: string): string {
  return encodeURIComponent(subject);
}

export function registryBase(cluster: number): string {
  return `/clusters/${cluster}/schema-registry`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The registry's `{"error_code": 40401, "message": ...}` as the console's ApiError, code "40401". */
export function registryErrorFrom(status: number, body: unknown): ApiError {
  if (isRecord(body) && typeof body.message === "string") {
    const code = typeof body.error_code === "number" ? String(body.error_code) : `http_${status}`;
    return new ApiError(status, code, body.message);
  }
  return new ApiError(status, `http_${status}`, `The schema registry answered with HTTP ${status}.`);
}

interface RequestOptions {
  method?: "GET" | "POST" | "PUT" | "DELETE";
  query?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

async function registryRequest<T>(cluster: number, path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? "GET";
  const url = new URL(`${registryBase(cluster)}${path}`, window.location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const headers = new Headers({ Accept: REGISTRY_CONTENT_TYPE });
  if (options.body !== undefined) headers.set("Content-Type", REGISTRY_CONTENT_TYPE);
  if (needsCsrfToken(method)) {
    // The console's session authenticates here too, so writes carry Django's CSRF token.
    const token = readCookie(CSRF_COOKIE_NAME);
    if (token) headers.set(CSRF_HEADER_NAME, token);
  }
  let response: Response;
  try {
    response = await globalThis.fetch(
      new Request(url, {
        method,
        headers,
        credentials: "same-origin",
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      }),
    );
  } catch (cause) {
    if (options.signal?.aborted) throw cause;
    throw apiErrorFromNetworkFailure(cause);
  }
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) throw registryErrorFrom(response.status, body);
  return body as T;
}

export const schemaRegistry = {
  /** Every live version of every subject the caller may read (Confluent's `GET /schemas`). */
  listLiveVersions: (cluster: number, signal?: AbortSignal) =>
    registryRequest<SubjectVersion[]>(cluster, "/schemas", { signal }),

  listVersions: (cluster: number, subject: string, signal?: AbortSignal) =>
    registryRequest<number[]>(cluster, `/subjects/${encodeSubject(subject)}/versions`, { signal }),

  getVersion: (cluster: number, subject: string, version: number | "latest", signal?: AbortSignal) =>
    registryRequest<SubjectVersion>(cluster, `/subjects/${encodeSubject(subject)}/versions/${version}`, { signal }),

  /** The subject's own level, or the registry-wide one when it has none. */
  getConfig: (cluster: number, subject: string, signal?: AbortSignal) =>
    registryRequest<SubjectConfig>(cluster, `/config/${encodeSubject(subject)}`, {
      query: { defaultToGlobal: "true" },
      signal,
    }),

  setCompatibility: (cluster: number, subject: string, compatibility: CompatibilityLevel) =>
    registryRequest<{ compatibility: CompatibilityLevel }>(cluster, `/config/${encodeSubject(subject)}`, {
      method: "PUT",
      body: { compatibility },
    }),

  testCompatibility: (cluster: number, subject: string, input: SchemaInput) =>
    registryRequest<CompatibilityResult>(cluster, `/compatibility/subjects/${encodeSubject(subject)}/versions/latest`, {
      method: "POST",
      query: { verbose: "true" },
      body: input,
    }),

  /** Soft-deleted versions only (Confluent's `deletedOnly`); an unknown subject answers 40401. */
  listDeletedVersions: (cluster: number, subject: string, signal?: AbortSignal) =>
    registryRequest<number[]>(cluster, `/subjects/${encodeSubject(subject)}/versions`, {
      query: { deletedOnly: "true" },
      signal,
    }),

  /** Soft delete (hidden, still readable with `deleted=true`), or with `permanent` the hard delete that
   * Confluent allows only after a soft delete. Answers the deleted version numbers. */
  deleteSubject: (cluster: number, subject: string, permanent: boolean) =>
    registryRequest<number[]>(cluster, `/subjects/${encodeSubject(subject)}`, {
      method: "DELETE",
      query: permanent ? { permanent: "true" } : {},
    }),

  deleteVersion: (cluster: number, subject: string, version: number, permanent: boolean) =>
    registryRequest<number>(cluster, `/subjects/${encodeSubject(subject)}/versions/${version}`, {
      method: "DELETE",
      query: permanent ? { permanent: "true" } : {},
    }),

  register: (cluster: number, subject: string, input: SchemaInput) =>
    registryRequest<{ id: number; version?: number }>(cluster, `/subjects/${encodeSubject(subject)}/versions`, {
      method: "POST",
      body: input,
    }),
};
