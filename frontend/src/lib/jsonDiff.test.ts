import { describe, expect, it } from "vitest";

import { diffJson } from "./jsonDiff";

describe("diffJson", () => {
  it("lists changed, added, removed and unchanged fields by path", () => {
    const rows = diffJson(
      { role: "viewer", user: "bo", limits: { partitions: 3, retention: 10 } },
      { role: "developer", user: "bo", limits: { partitions: 3, configs: ["cleanup.policy"] } },
    );
    expect(rows).toEqual([
      { path: "limits.configs", kind: "added", after: '["cleanup.policy"]' },
      { path: "limits.partitions", kind: "unchanged", before: "3", after: "3" },
      { path: "limits.retention", kind: "removed", before: "10" },
      { path: "role", kind: "changed", before: '"viewer"', after: '"developer"' },
      { path: "user", kind: "unchanged", before: '"bo"', after: '"bo"' },
    ]);
  });

  it("treats a missing side as everything added or removed", () => {
    expect(diffJson(null, { name: "orders" })).toEqual([{ path: "name", kind: "added", after: '"orders"' }]);
    expect(diffJson({ name: "orders" }, null)).toEqual([{ path: "name", kind: "removed", before: '"orders"' }]);
    expect(diffJson(null, null)).toEqual([]);
  });

  it("keeps explicit nulls inside objects visible", () => {
    expect(diffJson({ expires_at: null }, { expires_at: "2030-01-01T00:00:00Z" })).toEqual([
      { path: "expires_at", kind: "changed", before: "null", after: '"2030-01-01T00:00:00Z"' },
    ]);
  });
});
