export type LineDiffKind = "same" | "removed" | "added" | "changed";

export interface DiffLine {
  number: number;
  text: string;
}

/** One row of a side-by-side diff: the old line on the left, the new one on the right. */
export interface SideBySideRow {
  kind: LineDiffKind;
  left?: DiffLine;
  right?: DiffLine;
}

type Edit =
  | { op: "same"; left: DiffLine; right: DiffLine }
  | { op: "removed"; left: DiffLine }
  | { op: "added"; right: DiffLine };

/** Splits into lines; a trailing newline does not make an extra empty line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * The shortest edit from `before` to `after`, line by line, through the
 * longest common subsequence. Schemas are a few hundred lines at most, so
 * the quadratic table is small.
 */
function editScript(before: string[], after: string[]): Edit[] {
  const rows = before.length;
  const cols = after.length;
  // common[i][j]: length of the LCS of before[i:] and after[j:].
  const common: Uint32Array[] = Array.from({ length: rows + 1 }, () => new Uint32Array(cols + 1));
  for (let i = rows - 1; i >= 0; i--) {
    for (let j = cols - 1; j >= 0; j--) {
      common[i]![j] =
        before[i] === after[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const edits: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < rows || j < cols) {
    if (i < rows && j < cols && before[i] === after[j]) {
      edits.push({ op: "same", left: { number: i + 1, text: before[i]! }, right: { number: j + 1, text: after[j]! } });
      i++;
      j++;
    } else if (j < cols && (i >= rows || common[i]![j + 1]! >= common[i + 1]![j]!)) {
      edits.push({ op: "added", right: { number: j + 1, text: after[j]! } });
      j++;
    } else {
      edits.push({ op: "removed", left: { number: i + 1, text: before[i]! } });
      i++;
    }
  }
  return edits;
}

/**
 * A side-by-side line diff. A run of removed lines next to a run of added
 * lines is shown paired, row by row, as changed lines.
 */
export function diffLines(before: string, after: string): SideBySideRow[] {
  const edits = editScript(splitLines(before), splitLines(after));
  const rows: SideBySideRow[] = [];
  let removed: DiffLine[] = [];
  let added: DiffLine[] = [];
  const flush = () => {
    const paired = Math.max(removed.length, added.length);
    for (let index = 0; index < paired; index++) {
      const left = removed[index];
      const right = added[index];
      rows.push({ kind: left && right ? "changed" : left ? "removed" : "added", left, right });
    }
    removed = [];
    added = [];
  };
  for (const edit of edits) {
    if (edit.op === "same") {
      flush();
      rows.push({ kind: "same", left: edit.left, right: edit.right });
    } else if (edit.op === "removed") {
      removed.push(edit.left);
    } else {
      added.push(edit.right);
    }
  }
  flush();
  return rows;
}

/** Avro and JSON Schema texts indented two spaces so diffs line up; other text is left as written. */
export function prettySchema(text: string, schemaType: string | undefined): string {
  if (schemaType === "PROTOBUF") return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
