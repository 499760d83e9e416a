import { ApiError } from "../../api/errors";

export interface ConfigRow {
  key: string;
  value: string;
}

/** The rows as the API's `broker_config` object; blank rows are left out. */
export function rowsToConfig(rows: readonly ConfigRow[]): Record<string, string> {
  const config: Record<string, string> = {};
  for (const row of rows) {
    const key = row.key.trim();
    if (key) config[key] = row.value;
  }
  return config;
}

/** Rows whose property name is given twice: the later ones would silently win. */
export function duplicateKeys(rows: readonly ConfigRow[]): Set<number> {
  const seen = new Set<string>();
  const duplicates = new Set<number>();
  rows.forEach((row, index) => {
    const key = row.key.trim();
    if (!key) return;
    if (seen.has(key)) duplicates.add(index);
    seen.add(key);
  });
  return duplicates;
}

/**
 * The server's per-property problems, placed on the rows they name. The API
 * answers `invalid_broker_config` with `details.problems`, one sentence per
 * problem starting with the property's name; a problem naming no row is
 * returned separately.
 */
export function configProblemsByRow(
  error: unknown,
  rows: readonly ConfigRow[],
): { byRow: Map<number, string>; unplaced: string[] } {
  const byRow = new Map<number, string>();
  const unplaced: string[] = [];
  if (!(error instanceof ApiError) || error.code !== "invalid_broker_config") return { byRow, unplaced };
  const problems = Array.isArray(error.details.problems) ? error.details.problems : [];
  for (const problem of problems) {
    if (typeof problem !== "string") continue;
    const index = rows.findIndex((row) => row.key.trim() !== "" && problem.startsWith(`${row.key.trim()} `));
    if (index === -1) unplaced.push(problem);
    else byRow.set(index, [byRow.get(index), problem].filter(Boolean).join(" "));
  }
  return { byRow, unplaced };
}
