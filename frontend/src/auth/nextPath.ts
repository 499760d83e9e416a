import type { Location } from "react-router";

export const LOGIN_PATH = "/login";

/**
 * The page to return to after signing in. Only same-site paths are allowed:
 * `next` comes from the URL, and following "//evil.example" or
 * "https://…" would make the login page an open redirect.
 */
export function safeNextPath(next: string | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  if (next === LOGIN_PATH || next.startsWith(`${LOGIN_PATH}?`)) return "/";
  return next;
}

export function loginPathFor(location: Pick<Location, "pathname" | "search" | "hash">): string {
  const next = `${location.pathname}${location.search}${location.hash}`;
  return `${LOGIN_PATH}?next=${encodeURIComponent(next)}`;
}
