import { diffJson, type DiffKind } from "../lib/jsonDiff";

const KIND_LABEL: Record<DiffKind, string> = {
  added: "added",
  removed: "removed",
  changed: "changed",
  unchanged: "",
};

/** Before and after of an audited change, one row per field, changed fields marked. */
export function JsonDiffView({ before, after }: { before: unknown; after: unknown }) {
  const rows = diffJson(before, after);
  if (rows.length === 0) return <p className="muted">No recorded values.</p>;
  return (
    <table className="table diff" aria-label="Changes">
      <thead>
        <tr>
          <th>Field</th>
          <th>Before</th>
          <th>After</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.path || "(value)"} className={`diff__row diff__row--${row.kind}`}>
            <td className="mono">
              {row.path || "(value)"}
              {row.kind !== "unchanged" ? <span className="diff__kind"> {KIND_LABEL[row.kind]}</span> : null}
            </td>
            <td className="mono diff__before">{row.before ?? "—"}</td>
            <td className="mono diff__after">{row.after ?? "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
