export type DiffKind = "added" | "removed" | "changed" | "unchanged";

export interface DiffRow {
  /** Dotted path to the value, e.g. "policy.max_partitions"; "" for a whole scalar. */
  path: string;
  kind: DiffKind;
  before?: string;
  after?: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Objects become one row per leaf; lists and scalars are compared whole, as JSON. */
function flatten(value: unknown, path: string, into: Map<string, string>): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value)) flatten(child, path ? `${path}.${key}` : key, into);
  } else if (value !== undefined && value !== null) {
    into.set(path, JSON.stringify(value));
  } else if (path) {
    into.set(path, "null");
  }
}

/**
 * Compares an audit event's before and after snapshots field by field, so a
 * reader sees what changed rather than two blobs of JSON.
 */
export function diffJson(before: unknown, after: unknown): DiffRow[] {
  const old = new Map<string, string>();
  const next = new Map<string, string>();
  flatten(before, "", old);
  flatten(after, "", next);
  const paths = [...new Set([...old.keys(), ...next.keys()])].sort();
  return paths.map((path) => {
    const was = old.get(path);
    const now = next.get(path);
    if (was === undefined) return { path, kind: "added", after: now };
    if (now === undefined) return { path, kind: "removed", before: was };
    return { path, kind: was === now ? "unchanged" : "changed", before: was, after: now };
  });
}
