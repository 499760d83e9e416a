/** Django's default CSRF cookie name (CSRF_COOKIE_NAME). */
export const CSRF_COOKIE_NAME = "csrftoken";
/** Django's default CSRF header (CSRF_HEADER_NAME = HTTP_X_CSRFTOKEN). */
export const CSRF_HEADER_NAME = "X-CSRFToken";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

export function readCookie(name: string, cookieString: string = document.cookie): string | null {
  for (const part of cookieString.split(";")) {
    const separator = part.indexOf("=");
    if (separator === -1) continue;
    if (part.slice(0, separator).trim() === name) {
      return decodeURIComponent(part.slice(separator + 1).trim());
    }
  }
  return null;
}

export function needsCsrfToken(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}
