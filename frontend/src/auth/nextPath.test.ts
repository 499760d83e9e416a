import { describe, expect, it } from "vitest";

import { loginPathFor, safeNextPath } from "./nextPath";

describe("safeNextPath", () => {
  it("keeps a same-site path with its query", () => {
    expect(safeNextPath("/topics?cluster=prod#top")).toBe("/topics?cluster=prod#top");
  });

  it.each([null, "", "topics", "//evil.example/", "/\\evil.example", "https://evil.example/", "/login?next=/x"])(
    "falls back to the overview for %j",
    (next) => {
      expect(safeNextPath(next)).toBe("/");
    },
  );
});

describe("loginPathFor", () => {
  it("encodes the whole location into next", () => {
    expect(loginPathFor({ pathname: "/acls", search: "?principal=User:ada", hash: "" })).toBe(
      "/login?next=%2Facls%3Fprincipal%3DUser%3Aada",
    );
  });
});
