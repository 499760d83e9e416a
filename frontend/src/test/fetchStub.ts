import { vi } from "vitest";

import type { Session } from "../api/types";

export interface StubbedResponse {
  status: number;
  body?: unknown;
  /** Sent as-is instead of JSON, e.g. an HTML error page. */
  rawBody?: string;
}

type Handler = StubbedResponse | ((request: Request) => StubbedResponse | Promise<StubbedResponse>);

export function json(status: number, body: unknown): StubbedResponse {
  return { status, body };
}

export const signedIn: Session = {
  authenticated: true,
  user: { id: 1, username: "ada", email: "ada@example.com", is_superuser: true },
};
export const signedOut: Session = { authenticated: false, user: null };

/**
 * Replaces the global fetch with one that answers from `handlers`, keyed by
 * "METHOD /path/". A request nobody expected goes to `fallback`, or without
 * one fails the test instead of hanging. Returns the spy so tests can inspect
 * the requests sent.
 */
export function stubFetch(handlers: Record<string, Handler>, fallback?: Handler) {
  const spy = vi.fn(async (input: RequestInfo | URL): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input);
    const key = `${request.method} ${new URL(request.url).pathname}`;
    const handler = handlers[key] ?? fallback;
    if (!handler) throw new Error(`Unexpected request in test: ${key}`);
    const answer = typeof handler === "function" ? await handler(request) : handler;
    if (answer.status === 204) return new Response(null, { status: 204 });
    const text = answer.rawBody ?? JSON.stringify(answer.body);
    const contentType = answer.rawBody === undefined ? "application/json" : "text/html";
    return new Response(text, { status: answer.status, headers: { "Content-Type": contentType } });
  });
  vi.stubGlobal("fetch", spy);
  return spy;
}

/** The requests a stubbed fetch received, as Request objects. */
export function requestsOf(spy: ReturnType<typeof stubFetch>): Request[] {
  return spy.mock.calls.map(([input]) => (input instanceof Request ? input : new Request(input)));
}
