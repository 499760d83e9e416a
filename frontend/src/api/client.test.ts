import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { apiClient, unwrap } from "./client";
import { ApiError } from "./errors";

describe("apiClient", () => {
  it("sends the CSRF cookie back as a header on unsafe methods only", async () => {
    document.cookie = "csrftoken=abc123";
    const fetchSpy = stubFetch({
      "GET /api/v1/auth/session/": json(200, { authenticated: false, user: null }),
      "POST /api/v1/auth/logout/": { status: 204 },
    });

    await apiClient.GET("/api/v1/auth/session/");
    await apiClient.POST("/api/v1/auth/logout/");

    const [get, post] = requestsOf(fetchSpy);
    expect(get?.headers.get("X-CSRFToken")).toBeNull();
    expect(post?.headers.get("X-CSRFToken")).toBe("abc123");
    expect(post?.credentials).toBe("same-origin");
  });

  it("turns the documented error body into an ApiError", async () => {
    stubFetch({
      "GET /api/v1/overview/": json(403, {
        error: { code: "permission_denied", message: "You may not see this.", details: { team: "payments" } },
      }),
    });

    const result = await apiClient.GET("/api/v1/overview/");

    expect(() => unwrap(result)).toThrowError(ApiError);
    expect(() => unwrap(result)).toThrowError(
      expect.objectContaining({
        status: 403,
        code: "permission_denied",
        message: "You may not see this.",
        details: { team: "payments" },
      }),
    );
  });

  it("normalises an HTML error page", async () => {
    stubFetch({ "GET /api/v1/overview/": { status: 500, rawBody: "<h1>Server Error (500)</h1>" } });

    const result = await apiClient.GET("/api/v1/overview/");

    expect(() => unwrap(result)).toThrowError(expect.objectContaining({ status: 500, code: "http_500" }));
  });

  it("reports a request that never reached the server as a network error", async () => {
    stubFetch({});

    await expect(apiClient.GET("/api/v1/overview/")).rejects.toMatchObject({ status: 0, code: "network_error" });
  });
});
