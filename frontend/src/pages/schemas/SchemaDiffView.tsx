import { diffLines, type DiffLine, type LineDiffKind } from "../../lib/lineDiff";

const LEFT_CLASS: Partial<Record<LineDiffKind, string>> = { removed: "removed", changed: "removed" };
const RIGHT_CLASS: Partial<Record<LineDiffKind, string>> = { added: "added", changed: "added" };

function Cells({ line, tone }: { line?: DiffLine; tone?: string }) {
  const className = tone ? `line-diff__cell--${tone}` : undefined;
  return (
    <>
      <td className="line-diff__number">{line?.number ?? ""}</td>
      <td className={className}>{line?.text ?? ""}</td>
    </>
  );
}

/** Two schema texts side by side, removed lines on the left and added ones on the right. */
export function SchemaDiffView({ before, after, label }: { before: string; after: string; label: string }) {
  const rows = diffLines(before, after);
  const changes = rows.filter((row) => row.kind !== "same").length;
  return (
    <>
      <p className="muted" role="status">
        {changes === 0
          ? "The two versions are identical."
          : `${changes} ${changes === 1 ? "line differs" : "lines differ"}.`}
      </p>
      <table className="line-diff" aria-label={label}>
        <tbody>
          {rows.map((row, index) => (
            <tr key={index} data-kind={row.kind}>
              <Cells line={row.left} tone={LEFT_CLASS[row.kind]} />
              <Cells line={row.right} tone={RIGHT_CLASS[row.kind]} />
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
