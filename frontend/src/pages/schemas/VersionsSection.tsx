import { useId, useState } from "react";

import { combineQueries } from "../../api/combineQueries";
import { useSubjectVersion } from "../../api/hooks/schemas";
import { QueryView } from "../../components/states";
import { prettySchema } from "../../lib/lineDiff";
import { SchemaDiffView } from "./SchemaDiffView";

interface VersionsProps {
  cluster: number;
  subject: string;
  versions: number[];
}

function VersionSelect({
  label,
  versions,
  value,
  onChange,
}: {
  label: string;
  versions: number[];
  value: number;
  onChange: (version: number) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id} className="field__label">
        {label}
      </label>
      <select id={id} className="input" value={value} onChange={(event) => onChange(Number(event.target.value))}>
        {versions.map((version) => (
          <option key={version} value={version}>
            Version {version}
          </option>
        ))}
      </select>
    </div>
  );
}

/** One version's schema, pretty-printed. */
export function VersionsSection({ cluster, subject, versions }: VersionsProps) {
  const latest = versions.at(-1) ?? 1;
  const [chosen, setChosen] = useState<number | null>(null);
  const version = chosen !== null && versions.includes(chosen) ? chosen : latest;
  const schema = useSubjectVersion(cluster, subject, version);
  return (
    <section className="section" aria-labelledby="versions-heading">
      <h2 id="versions-heading" className="section__title">
        Versions
      </h2>
      <p>
        {versions.length} {versions.length === 1 ? "version" : "versions"}: {versions.join(", ")}
      </p>
      <div className="inline-form">
        <VersionSelect label="Show version" versions={versions} value={version} onChange={setChosen} />
      </div>
      <QueryView query={schema} errorTitle="Could not load this version">
        {(data) => (
          <>
            <p className="muted">
              Schema id {data.id} · {data.schemaType ?? "AVRO"}
              {data.references?.length ? ` · references ${data.references.map((ref) => ref.subject).join(", ")}` : ""}
            </p>
            <pre className="code-block" aria-label={`Schema of version ${data.version}`}>
              {prettySchema(data.schema, data.schemaType)}
            </pre>
          </>
        )}
      </QueryView>
    </section>
  );
}

/** Two chosen versions side by side; by default the one before the latest against the latest. */
export function DiffSection({ cluster, subject, versions }: VersionsProps) {
  const latest = versions.at(-1) ?? 1;
  const [from, setFrom] = useState(versions.at(-2) ?? latest);
  const [to, setTo] = useState(latest);
  const before = useSubjectVersion(cluster, subject, from);
  const after = useSubjectVersion(cluster, subject, to);
  if (versions.length < 2) return null;
  return (
    <section className="section" aria-labelledby="diff-heading">
      <h2 id="diff-heading" className="section__title">
        Compare versions
      </h2>
      <div className="inline-form">
        <VersionSelect label="From" versions={versions} value={from} onChange={setFrom} />
        <VersionSelect label="To" versions={versions} value={to} onChange={setTo} />
      </div>
      <QueryView query={combineQueries(before, after)} errorTitle="Could not load a version">
        {([was, now]) => (
          <SchemaDiffView
            label={`Version ${from} compared with version ${to}`}
            before={prettySchema(was.schema, was.schemaType)}
            after={prettySchema(now.schema, now.schemaType)}
          />
        )}
      </QueryView>
    </section>
  );
}
